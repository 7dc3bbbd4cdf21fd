// Package negotiation chooses how a request body is read and how a response
// is written: the media type (JSON, YAML, protobuf) and, for responses, an
// alternative representation the client asked for (a meta.k8s.io Table, or
// PartialObjectMetadata), as kube's content negotiation does.
package negotiation

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/munnerz/goautoneg"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/miniapiserver/miniapiserver/api"
)

// The media types the server reads and writes.
const (
	MediaTypeJSON     = "application/json"
	MediaTypeYAML     = "application/yaml"
	MediaTypeProtobuf = "application/vnd.kubernetes.protobuf"
)

// Codecs returns the scheme's serializers by media type, built on first
// use. Each media type has a plain Serializer and a StrictSerializer; the
// plain one must stay lenient, or fieldValidation=Ignore would still
// report unknown fields.
var Codecs = sync.OnceValue(func() serializer.CodecFactory { return serializer.NewCodecFactory(api.Scheme()) })

// serverMediaTypes is the order the server prefers and names in errors.
var serverMediaTypes = []string{MediaTypeJSON, MediaTypeYAML, MediaTypeProtobuf}

// Serializer returns the serializers of a media type the server speaks.
func Serializer(mediaType string) (runtime.SerializerInfo, bool) {
	for _, info := range Codecs().SupportedMediaTypes() {
		if info.MediaType == mediaType {
			return info, true
		}
	}
	return runtime.SerializerInfo{}, false
}

// Input returns the serializer of a request body to a built-in
// resource (Builtin.Input).
func Input(r *http.Request) (runtime.SerializerInfo, error) { return Builtin.Input(r) }

// Target is an alternative representation a client may ask for in Accept
// (as=...;g=meta.k8s.io;v=...).
type Target string

// The targets kube serves; "" is the object itself.
const (
	TargetObject                    Target = ""
	TargetTable                     Target = "Table"
	TargetPartialObjectMetadata     Target = "PartialObjectMetadata"
	TargetPartialObjectMetadataList Target = "PartialObjectMetadataList"
)

// Output is how to write a response.
type Output struct {
	// MediaType is the Content-Type of the response.
	MediaType string
	Info      runtime.SerializerInfo
	// Pretty asks for indented JSON (?pretty=true, ;pretty=1 in Accept,
	// or curl and browsers).
	Pretty bool
	// Target is the representation; TargetVersion its meta.k8s.io version.
	Target        Target
	TargetVersion string
}

// Protobuf reports whether the response is protobuf.
func (o Output) Protobuf() bool { return o.Info.MediaType == MediaTypeProtobuf }

// NegotiateOutput negotiates the response of a built-in resource
// (Builtin.Output), or of what is no resource (discovery, errors).
func NegotiateOutput(r *http.Request, allowed ...Target) (Output, error) {
	return Builtin.Output(r, allowed...)
}

// NegotiateWatchOutput negotiates the response of a watch of a built-in
// resource (Builtin.WatchOutput).
func NegotiateWatchOutput(r *http.Request, allowed ...Target) (Output, error) {
	return Builtin.WatchOutput(r, allowed...)
}

// watchMediaTypes are the stream forms, named in a watch's 406.
var watchMediaTypes = []string{MediaTypeJSON + ";stream=watch", MediaTypeProtobuf + ";stream=watch"}

func (m *MediaTypes) negotiate(r *http.Request, allowed []Target) (Output, bool) {
	header := r.Header.Get("Accept")
	if header == "" {
		header = "*/*"
	}
	// As kube's, the weights order the clauses but do not exclude any:
	// even q=0 is served.
	for _, clause := range goautoneg.ParseAccept(header) {
		mediaType, ok := m.clauseMediaType(clause)
		if !ok {
			continue
		}
		out, ok := match(clause, mediaType, allowed)
		if ok {
			out.Pretty = out.Info.PrettySerializer != nil && (clause.Params["pretty"] == "1" || isPretty(r))
			return out, true
		}
	}
	return Output{}, false
}

// clauseMediaType is the media type a clause of Accept names among those
// written (JSON for a wildcard).
func (m *MediaTypes) clauseMediaType(clause goautoneg.Accept) (string, bool) {
	switch {
	case clause.Type == "*" && clause.SubType == "*", clause.Type == "application" && clause.SubType == "*":
		return MediaTypeJSON, true
	}
	mediaType := clause.Type + "/" + clause.SubType
	return mediaType, contains(m.served, mediaType)
}

func match(clause goautoneg.Accept, mediaType string, allowed []Target) (Output, bool) {
	info, ok := Serializer(mediaType)
	if !ok {
		return Output{}, false
	}
	out := Output{MediaType: mediaType, Info: info}
	if v := clause.Params["stream"]; v != "" && (v != "watch" || info.StreamSerializer == nil) {
		return Output{}, false
	}
	as, g, v := clause.Params["as"], clause.Params["g"], clause.Params["v"]
	if as == "" && g == "" && v == "" {
		return out, true
	}
	// kube serves its alternative representations from meta.k8s.io only,
	// and Tables only as JSON or YAML.
	if g != "meta.k8s.io" || (v != "v1" && v != "v1beta1") {
		return Output{}, false
	}
	target := Target(as)
	switch target {
	case TargetTable:
		if mediaType == MediaTypeProtobuf || !containsTarget(allowed, TargetTable) {
			return Output{}, false
		}
	case TargetPartialObjectMetadata, TargetPartialObjectMetadataList:
		if !containsTarget(allowed, TargetPartialObjectMetadata) && !containsTarget(allowed, TargetPartialObjectMetadataList) {
			return Output{}, false
		}
	default:
		return Output{}, false
	}
	out.Target, out.TargetVersion = target, v
	return out, true
}

// The aggregated discovery document kube 1.37 serves (apidiscovery.k8s.io
// v2beta1 is gone: such a request gets the unaggregated document, or 406).
const (
	AggregatedDiscoveryGroup   = "apidiscovery.k8s.io"
	AggregatedDiscoveryVersion = "v2"
	AggregatedDiscoveryKind    = "APIGroupDiscoveryList"
)

// NegotiateAggregatedDiscovery reports whether a request for /api or
// /apis asks for the aggregated document, and in which media type. As in
// kube, any acceptable clause naming it wins over the clauses without
// parameters, wherever it stands. The Content-Type carries the parameters
// (application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList).
func NegotiateAggregatedDiscovery(r *http.Request) (Output, bool) {
	for _, clause := range goautoneg.ParseAccept(r.Header.Get("Accept")) {
		if clause.Params["as"] != AggregatedDiscoveryKind ||
			clause.Params["g"] != AggregatedDiscoveryGroup || clause.Params["v"] != AggregatedDiscoveryVersion {
			continue
		}
		mediaType, ok := Builtin.clauseMediaType(clause)
		if !ok {
			continue
		}
		info, ok := Serializer(mediaType)
		if !ok {
			continue
		}
		if v := clause.Params["stream"]; v != "" && (v != "watch" || info.StreamSerializer == nil) {
			continue
		}
		return Output{
			MediaType: mediaType + ";g=" + AggregatedDiscoveryGroup + ";v=" + AggregatedDiscoveryVersion + ";as=" + AggregatedDiscoveryKind,
			Info:      info,
			Pretty:    info.PrettySerializer != nil && (clause.Params["pretty"] == "1" || isPretty(r)),
		}, true
	}
	return Output{}, false
}

func containsTarget(list []Target, t Target) bool {
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}

// NotAcceptable is kube's answer when no clause of Accept names a
// representation the endpoint can write (its errNotAcceptable: no
// details), naming the media types it could.
func NotAcceptable(message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
		Message: message,
	}}
}

func notAcceptable(mediaTypes []string) error {
	return NotAcceptable("only the following media types are accepted: " + strings.Join(mediaTypes, ", "))
}

// Produces is what a route produces, as kube declares it to its router.
type Produces int

const (
	// ProducesResource: every resource route, the three media types.
	ProducesResource Produces = iota
	// ProducesStreaming: list and watch routes, also their streaming forms.
	ProducesStreaming
	// ProducesJSON: /version.
	ProducesJSON
)

var (
	streamingMediaTypes = append(slices.Clone(serverMediaTypes), MediaTypeJSON+";stream=watch", MediaTypeProtobuf+";stream=watch")
	jsonOnly            = []string{MediaTypeJSON}
)

// mediaTypes are the media types p names, in the order errors list them.
func (p Produces) mediaTypes() []string {
	switch p {
	case ProducesStreaming:
		return streamingMediaTypes
	case ProducesJSON:
		return jsonOnly
	}
	return serverMediaTypes
}

// CheckAccept is kube's router-level check of Accept (go-restful's, which
// runs before any handler): a request whose Accept names none of the media
// types a route produces, parameters and quality ignored, is refused with
// 406 listing them. A finer mismatch (as=Table on an endpoint without
// tables, ...) is the handler's to refuse (NegotiateOutput).
func CheckAccept(r *http.Request, p Produces) error {
	produces := p.mediaTypes()
	accept := r.Header.Get("Accept")
	if accept == "" {
		return nil
	}
	for _, clause := range strings.Split(accept, ",") {
		mediaType, _, _ := strings.Cut(clause, ";")
		mediaType = strings.TrimSpace(mediaType)
		if mediaType == "*/*" || contains(produces, mediaType) {
			return nil
		}
	}
	return routerError(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		fmt.Sprintf("406: Not Acceptable\n\nAvailable representations: %s", strings.Join(produces, ", ")))
}

// CheckContentType is the router-level check of a route that declares the
// media types it consumes (kube's PATCH routes): anything else, or no
// Content-Type, is 415 before any handler runs.
func CheckContentType(r *http.Request, consumes []string) error {
	mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	if contains(consumes, strings.TrimSpace(mediaType)) {
		return nil
	}
	return routerError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, "415: Unsupported Media Type")
}

// routerError is a Status as kube words its router's refusals (with empty
// details).
func routerError(code int32, reason metav1.StatusReason, message string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: message, Details: &metav1.StatusDetails{},
	}}
}

// isPretty is kube's rule: ?pretty wins; otherwise curl, wget and browsers
// get indented JSON.
func isPretty(r *http.Request) bool {
	if p := r.URL.Query().Get("pretty"); p != "" {
		b, _ := strconv.ParseBool(p)
		return b
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
