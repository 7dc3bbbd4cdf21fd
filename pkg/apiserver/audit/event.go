package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"sigs.k8s.io/yaml"

	"github.com/miniapiserver/miniapiserver/api"
)

// maxUserAgent is where kube cuts the user agent of an event.
const maxUserAgent = 1024

// Begin starts auditing the request at the level cfg says (nothing at
// None): the event gets what attrs and r tell of the request. It reports
// whether the request is audited.
func (ac *Context) Begin(r *http.Request, attrs authorizer.Attributes, cfg RequestConfig) bool {
	if ac == nil || cfg.Level == auditv1.LevelNone {
		return false
	}
	ev := &auditv1.Event{
		TypeMeta:                 metav1.TypeMeta{Kind: "Event", APIVersion: auditv1.SchemeGroupVersion.String()},
		Level:                    cfg.Level,
		AuditID:                  ac.uid(),
		RequestURI:               r.URL.RequestURI(),
		Verb:                     attrs.GetVerb(),
		UserAgent:                r.UserAgent(),
		RequestReceivedTimestamp: metav1.NewMicroTime(ac.received),
	}
	if len(ev.UserAgent) > maxUserAgent {
		ev.UserAgent = ev.UserAgent[:maxUserAgent] + "...TRUNCATED"
	}
	for _, ip := range utilnet.SourceIPs(r) {
		ev.SourceIPs = append(ev.SourceIPs, ip.String())
	}
	if u := attrs.GetUser(); u != nil {
		ev.User = userInfo(u)
	}
	if attrs.IsResourceRequest() {
		ev.ObjectRef = &auditv1.ObjectReference{
			Namespace: attrs.GetNamespace(), Name: attrs.GetName(),
			Resource: attrs.GetResource(), Subresource: attrs.GetSubresource(),
			APIGroup: attrs.GetAPIGroup(), APIVersion: attrs.GetAPIVersion(),
		}
	}
	ac.metrics.levelTotal.WithLabelValues(string(cfg.Level)).Inc()
	ac.mu.Lock()
	ac.event, ac.rule = ev, cfg
	ac.mu.Unlock()
	return true
}

// Emit sends a copy of the event at stage to sink, unless the policy
// leaves the stage out.
func (ac *Context) Emit(stage auditv1.Stage, sink Sink) {
	var ev *auditv1.Event
	ac.visit(func(e *auditv1.Event, rule RequestConfig) {
		if !rule.omits(stage) {
			ev = e.DeepCopy()
		}
	})
	if ev == nil {
		return
	}
	ev.Stage = stage
	ev.StageTimestamp = metav1.NewMicroTime(time.Now())
	ac.metrics.eventTotal.Inc()
	sink.ProcessEvent(ev)
}

// SetResponseStatus records the answer's code, and the Status the server
// answered with when it was one (an error): at Metadata level and above,
// as kube.
func (ac *Context) SetResponseStatus(code int, status *metav1.Status) {
	ac.visit(func(ev *auditv1.Event, _ RequestConfig) {
		out := &metav1.Status{Code: int32(code)}
		if status != nil {
			out.Status, out.Message, out.Reason, out.Details = status.Status, status.Message, status.Reason, status.Details
		}
		ev.ResponseStatus = out
	})
}

// SetResponseCode records the answer's code, keeping the rest of the
// response status set before.
func (ac *Context) SetResponseCode(code int) {
	ac.visit(func(ev *auditv1.Event, _ RequestConfig) {
		if ev.ResponseStatus == nil {
			ev.ResponseStatus = &metav1.Status{}
		}
		ev.ResponseStatus.Code = int32(code)
	})
}

// SetResponseObject records the answer's body (JSON), at RequestResponse.
func (ac *Context) SetResponseObject(raw []byte) {
	ac.visit(func(ev *auditv1.Event, rule RequestConfig) {
		if rule.Level != auditv1.LevelRequestResponse {
			return
		}
		if rule.OmitManagedFields {
			raw = withoutManagedFields(raw)
		}
		ev.ResponseObject = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	})
}

// LogRequestObject records the object a create or update sends: the
// reference gets its name, namespace, uid and resourceVersion (Metadata
// and above), and the object itself is kept at Request and above, in
// JSON at gvk, as kube's audit.LogRequestObject.
func LogRequestObject(ctx context.Context, obj runtime.Object, gvk schema.GroupVersionKind) {
	From(ctx).visit(func(ev *auditv1.Event, rule RequestConfig) {
		if ev.ObjectRef == nil {
			ev.ObjectRef = &auditv1.ObjectReference{}
		}
		if m, err := meta.Accessor(obj); err == nil {
			ref := ev.ObjectRef
			ref.Namespace = firstNonEmpty(ref.Namespace, m.GetNamespace())
			ref.Name = firstNonEmpty(ref.Name, m.GetName())
			ref.UID = m.GetUID()
			ref.ResourceVersion = firstNonEmpty(ref.ResourceVersion, m.GetResourceVersion())
		}
		if rule.Level == auditv1.LevelMetadata {
			return
		}
		obj := obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if m, err := meta.Accessor(obj); err == nil && rule.OmitManagedFields {
			m.SetManagedFields(nil)
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			slog.Error("audit: encoding a request object", "error", err, "auditID", ev.AuditID)
			return
		}
		ev.RequestObject = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	})
}

// LogRequestPatch records the body of a patch as it was sent, at Request
// and above (an apply configuration in YAML is kept as its JSON).
func LogRequestPatch(ctx context.Context, patch []byte) {
	From(ctx).visit(func(ev *auditv1.Event, rule RequestConfig) {
		if rule.Level == auditv1.LevelMetadata {
			return
		}
		raw := append([]byte(nil), patch...)
		if !json.Valid(raw) {
			var err error
			if raw, err = yaml.YAMLToJSON(patch); err != nil {
				return
			}
		}
		ev.RequestObject = &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}
	})
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// withoutManagedFields drops metadata.managedFields from a JSON object
// (and from the items of a list); what is not an object stays as it is.
func withoutManagedFields(raw []byte) []byte {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	drop := func(o any) {
		if m, ok := o.(map[string]any); ok {
			if md, ok := m["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
		}
	}
	drop(obj)
	if items, ok := obj["items"].([]any); ok {
		for _, it := range items {
			drop(it)
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}

// protobufCodec reads the protobuf bodies the server answers with.
var protobufCodec = sync.OnceValue(func() *protobuf.Serializer { return protobuf.NewSerializer(api.Scheme(), api.Scheme()) })

// ResponseJSON is an answer's body as an event keeps it: JSON as it is, a
// protobuf body decoded and written in JSON (as kube encodes the response
// object for its audit events). false when the body is of another type
// or does not decode.
func ResponseJSON(contentType string, body []byte) ([]byte, bool) {
	switch contentType {
	case runtime.ContentTypeJSON:
		body = bytes.TrimRight(body, "\n")
		return body, json.Valid(body)
	case runtime.ContentTypeProtobuf:
		obj, _, err := protobufCodec().Decode(body, nil, nil)
		if err != nil {
			return nil, false
		}
		data, err := json.Marshal(obj)
		return data, err == nil
	}
	return nil, false
}
