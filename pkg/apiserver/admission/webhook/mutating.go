package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	kjson "sigs.k8s.io/json"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Mutating is kube's MutatingAdmissionWebhook plugin: a
// handlers.MutatingAdmission that calls the mutating webhooks the request
// concerns one after the other, each on the object as the ones before it
// left it, applying their JSON patches; when one changes the object, the
// webhooks before it that asked to be (reinvocationPolicy IfNeeded) are
// called once more.
type Mutating struct{ dispatcher }

// NewMutating returns the plugin calling the mutating webhooks of source;
// namespaces are read for namespaceSelectors.
func NewMutating(source *Source, namespaces rest.Getter) *Mutating {
	return &Mutating{newDispatcher(source, namespaces)}
}

// Validate implements handlers.Admission: mutating webhooks only mutate.
func (p *Mutating) Validate(context.Context, handlers.Attributes, runtime.Object) error { return nil }

// reinvocation is kube's record of which webhooks to call again.
type reinvocation struct {
	// invoked are the reinvocable webhooks called since the object last
	// changed; reinvoke those to call in the second round.
	invoked, reinvoke sets.Set[string]
}

// Admit implements handlers.MutatingAdmission: obj (nil on a delete) is
// changed in place.
func (p *Mutating) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if p.source.idle(p.source.mutatingHooks()) {
		return nil
	}
	attr := attributes(ctx, a, obj)
	if ok, err := p.ready(ctx, attr); !ok {
		return err
	}
	v := versioned(attr)
	state := &reinvocation{invoked: sets.New[string](), reinvoke: sets.New[string]()}
	if err := p.round(ctx, a, v, state, false); err != nil {
		return err
	}
	if state.reinvoke.Len() == 0 {
		return nil
	}
	return p.round(ctx, a, v, state, true)
}

// AdmitConnect implements handlers.MutatingConnectAdmission, as kube's
// plugin handles CONNECT: the webhooks are called as by Admit, with the
// request's options as the object, and a patch changes the options the
// storage connects with (kube converts the patched options back into the
// request's).
func (p *Mutating) AdmitConnect(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	return p.Admit(ctx, a, obj)
}

// round calls the webhooks concerned in order (in the second round, only
// those to reinvoke).
func (p *Mutating) round(ctx context.Context, a handlers.Attributes, v *admission.VersionedAttributes, state *reinvocation, again bool) error {
	at := callSite{}
	if again {
		at.round = 1
	}
	for i, h := range p.source.mutatingHooks() {
		at.index = i
		invocation, hv, eq, err := p.shouldCall(ctx, h, v)
		if err != nil {
			return err
		}
		if invocation == nil || (again && !state.reinvoke.Has(h.uid)) {
			continue
		}
		defaults := a.Default
		if eq != nil {
			defaults = nil // the request's version's defaults, once converted back
		}
		began := time.Now()
		changed, err := p.callOne(ctx, h, at, invocation, hv, defaults)
		p.source.metrics.observeCall(h, string(v.Attributes.GetOperation()), time.Since(began), err)
		annotateMutation(ctx, h, at, changed)
		if changed && eq != nil {
			// Patched at another version: the request's object becomes
			// the patched one, converted back.
			err = convertBack(v, hv, eq, a.Default)
		}
		if changed {
			// The ones called before may want to see the change.
			state.reinvoke = state.reinvoke.Union(state.invoked)
			state.invoked = sets.New[string]()
		}
		if h.reinvocationPolicy != nil && *h.reinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy {
			state.invoked.Insert(h.uid)
		}
		if err == nil {
			continue
		}
		reqErr, ignored := failed(ctx, h.failurePolicy, err)
		if !ignored {
			return reqErr
		}
		slog.Warn("admission webhooks: failed calling webhook, failing open", "webhook", h.name, "error", err)
		failedOpen(ctx, p.source.metrics, h, at)
	}
	return nil
}

// callOne calls a mutating webhook and applies its patch to the object,
// then the object's defaults (as kube decodes a patched object); it
// reports whether the object changed.
func (p *Mutating) callOne(ctx context.Context, h *hook, at callSite, inv *invocation,
	v *admission.VersionedAttributes, defaults func(runtime.Object)) (bool, error) {
	result, err := call(ctx, h, inv, v)
	if err != nil || len(result.patch) == 0 {
		return false, err
	}
	name := h.name
	patch, err := jsonpatch.DecodePatch(result.patch)
	if err != nil {
		return false, &callError{webhook: name, reason: fmt.Errorf("received undecodable patch in webhook response: %w", err),
			status: apierrors.NewServiceUnavailable("error decoding patch in webhook response")}
	}
	if len(patch) == 0 {
		return false, nil
	}
	obj := v.VersionedObject.Object()
	if obj == nil {
		return false, apierrors.NewInternalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", name))
	}
	if result.patchType != admissionv1.PatchTypeJSONPatch {
		return false, &callError{webhook: name, reason: fmt.Errorf("unsupported patch type %q", result.patchType)}
	}
	patched, err := applyPatch(obj, patch)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	changed := !equality.Semantic.DeepEqual(obj, patched)
	annotatePatch(ctx, h, at, patch)
	if defaults != nil {
		defaults(patched)
	}
	if err := rest.ReplaceObject(obj, patched); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return changed, nil
}

// convertBack makes the object of v (the request's) what the object of
// converted (at eq's kind) became, with the request's version's defaults.
func convertBack(v, converted *admission.VersionedAttributes, eq *Equivalent, defaults func(runtime.Object)) error {
	back, err := eq.Convert(converted.VersionedObject.Object(), v.VersionedKind)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("unable to convert to %v: %w", v.VersionedKind, err))
	}
	if defaults != nil {
		defaults(back)
	}
	if err := rest.ReplaceObject(v.VersionedObject.Object(), withKind(back, v.VersionedKind)); err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

// applyPatch returns a new object: obj with patch applied.
func applyPatch(obj runtime.Object, patch jsonpatch.Patch) (runtime.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if data, err = patch.Apply(data); err != nil {
		return nil, err
	}
	if _, ok := obj.(*unstructured.Unstructured); ok {
		out := &unstructured.Unstructured{}
		return out, out.UnmarshalJSON(data)
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	return out, kjson.UnmarshalCaseSensitivePreserveInts(data, out)
}
