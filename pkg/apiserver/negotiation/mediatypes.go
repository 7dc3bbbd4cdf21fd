package negotiation

import (
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// MediaTypes are what an endpoint reads and writes, and how its requests
// reach it: kube's built-in resources are routed by go-restful (which
// refuses an unknown Accept or PATCH Content-Type before the handler, in
// its own words) and speak protobuf; custom resources are served by the
// CRD handler, which negotiates everything itself and speaks JSON and
// YAML only.
type MediaTypes struct {
	// served are the media types of bodies read and written, in the
	// server's order of preference.
	served []string
	// listed are what a 406 names (kube names protobuf for custom
	// resources too, which it cannot write them in).
	listed []string
	// patches are the patch media types applied.
	patches []string
	routed  bool
}

var (
	// Builtin is how the built-in resources negotiate. Its patches are
	// kube's but application/apply-patch+cbor, which kube 1.37 serves
	// only behind the CBORServingAndStorage feature gate (off by default).
	Builtin = &MediaTypes{served: serverMediaTypes, listed: serverMediaTypes, routed: true,
		patches: []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}}
	// CustomResources is how custom resources negotiate: no protobuf, no
	// strategic merge patch (they have no Go type to merge by).
	CustomResources = &MediaTypes{served: []string{MediaTypeJSON, MediaTypeYAML}, listed: serverMediaTypes,
		patches: []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}}
)

// Routed reports that requests are checked by a router before the
// handler (RouteChecks), as go-restful checks kube's built-in routes.
func (m *MediaTypes) Routed() bool { return m.routed }

// PatchTypes are the patch media types the endpoint applies.
func (m *MediaTypes) PatchTypes() []string { return m.patches }

// Input returns the serializer of a request body, from its Content-Type
// (JSON when there is none). Another type is 415 UnsupportedMediaType.
func (m *MediaTypes) Input(r *http.Request) (runtime.SerializerInfo, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = MediaTypeJSON
	}
	if mediaType, _, err := mime.ParseMediaType(ct); err == nil && contains(m.served, mediaType) {
		if info, ok := Serializer(mediaType); ok {
			return info, nil
		}
	}
	return runtime.SerializerInfo{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(m.served, ", "),
	}}
}

// Output negotiates the response of r from its Accept header. allowed
// lists the targets the endpoint can produce besides the object itself; a
// client that accepts nothing the endpoint writes gets 406 NotAcceptable.
//
// As kube's, an endpoint that allows either PartialObjectMetadata or
// PartialObjectMetadataList allows both: asking for the one that does not
// fit the response is the handler's 406 (see the handlers' transform).
func (m *MediaTypes) Output(r *http.Request, allowed ...Target) (Output, error) {
	out, ok := m.negotiate(r, allowed)
	if !ok {
		return Output{}, notAcceptable(m.listed)
	}
	return out, nil
}

// WatchOutput negotiates the response of a watch: JSON lines or
// length-delimited protobuf frames (MediaType says which, as kube's
// Content-Type: application/json or
// application/vnd.kubernetes.protobuf;stream=watch). As in kube, the first
// acceptable clause decides: a client that prefers YAML, which has no
// stream form, gets 406 even if it also accepts JSON.
func (m *MediaTypes) WatchOutput(r *http.Request, allowed ...Target) (Output, error) {
	out, ok := m.negotiate(r, allowed)
	if !ok || out.Info.StreamSerializer == nil {
		return Output{}, notAcceptable(watchMediaTypes)
	}
	if out.Protobuf() {
		out.MediaType = MediaTypeProtobuf + ";stream=watch"
	}
	out.Pretty = false // kube never indents watch events
	return out, nil
}
