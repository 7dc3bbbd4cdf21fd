package handlers

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream/wsstream"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// parameterCodec reads options objects (PodLogOptions, PodExecOptions,
// ...) from a query string.
var parameterCodec = sync.OnceValue(func() runtime.ParameterCodec { return runtime.NewParameterCodec(api.Scheme()) })

// Connect serves a connect subresource (pods/exec, nodes/proxy, ...), for
// every method it accepts: the query becomes its options, and the
// handler the storage returns serves the request, upgrades included.
func (s *Scope) Connect(c rest.Connecter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.URL.Query()["dryRun"]; ok {
			WriteError(w, r, apierrors.NewBadRequest("dryRun is not supported"))
			return
		}
		ctx, ns, name := s.requestContext(r)
		opts, subpath, subpathKey := c.NewConnectOptions()
		if err := s.decodeOptions(r, opts, subpath, subpathKey); err != nil {
			WriteError(w, r, err)
			return
		}
		if err := s.admitConnect(ctx, ns, name, opts); err != nil {
			WriteError(w, r, err)
			return
		}
		h, err := c.Connect(ctx, name, opts, &responder{w: w, r: r})
		if err != nil {
			WriteError(w, r, err)
			return
		}
		h.ServeHTTP(w, r)
	}
}

// admitConnect runs admission on a connect request as kube's connect
// handler does: the chain's mutating steps, which may change opts, then
// its validating ones, each with attributes whose operation is CONNECT,
// whose object is opts and which have no old object nor options (a
// connect is never a dry run).
func (s *Scope) admitConnect(ctx context.Context, ns, name string, opts runtime.Object) error {
	attrs := Attributes{Operation: Connect, Resource: s.Resource, Subresource: s.Subresource,
		Namespace: ns, Name: name, Kind: s.Kind}
	if m, ok := s.Admission.(MutatingConnectAdmission); ok {
		if err := m.AdmitConnect(ctx, attrs, opts); err != nil {
			return err
		}
	}
	if v, ok := s.Admission.(ConnectAdmission); ok {
		return v.ValidateConnect(ctx, attrs, opts)
	}
	return nil
}

// GetWithOptions serves GET on a subresource read with options (pods/log):
// a stream is written out as it comes, anything else as an object.
func (s *Scope) GetWithOptions(g rest.GetterWithOptions) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, _, name := s.requestContext(r)
		opts, subpath, subpathKey := g.NewGetOptions()
		if err := s.decodeOptions(r, opts, subpath, subpathKey); err != nil {
			WriteError(w, r, err)
			return
		}
		obj, err := g.Get(ctx, name, opts)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if streamer, ok := obj.(rest.ResourceStreamer); ok {
			s.stream(w, r, streamer)
			return
		}
		out, err := negotiation.NegotiateOutput(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		s.writeResult(w, r, out, http.StatusOK, obj)
	}
}

// decodeOptions reads the request's query into opts, as kube's
// getRequestOptions: with subpath, the rest of the path after the
// subresource (its leading and trailing slashes kept) is the field
// subpathKey. A query that does not decode is a 400.
func (s *Scope) decodeOptions(r *http.Request, opts runtime.Object, subpath bool, subpathKey string) error {
	query := r.URL.Query()
	if subpath {
		query = withSubpath(r, query, subpathKey, s.Subresource != "")
	}
	if err := parameterCodec().DecodeParameters(query, s.Kind.GroupVersion(), opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// withSubpath is query with key set to the path after the (sub)resource.
func withSubpath(r *http.Request, query url.Values, key string, subresource bool) url.Values {
	parts, path := []string(nil), r.URL.Path
	if info, ok := request.InfoFrom(r.Context()); ok {
		parts, path = info.Parts, info.Path
	}
	start := 2 // RESOURCE/NAME/...
	if subresource {
		start = 3 // RESOURCE/NAME/SUBRESOURCE/...
	}
	p := ""
	if len(parts) > start {
		p = strings.Join(parts[start:], "/")
	}
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.HasSuffix(path, "/") && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	out := make(url.Values, len(query)+1)
	for k, v := range query {
		out[k] = v
	}
	out[key] = []string{p}
	return out
}

// stream writes what a ResourceStreamer reads, as kube's StreamObject:
// nothing to read is a 204; a WebSocket client gets the stream as
// WebSocket messages.
func (s *Scope) stream(w http.ResponseWriter, r *http.Request, streamer rest.ResourceStreamer) {
	in, flush, contentType, err := streamer.InputStream(r.Context(), s.Kind.GroupVersion().String(), r.Header.Get("Accept"))
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if in == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	defer in.Close()
	if wsstream.IsWebSocketRequest(r) {
		_ = wsstream.NewReader(in, true, wsstream.NewDefaultReaderProtocols()).Copy(w, r)
		return
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	var out io.Writer = w
	if flush {
		out = flushWriter{w: w, rc: rc}
	}
	_, _ = io.Copy(out, in)
}

// flushWriter sends every write to the client at once (a followed log).
type flushWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// responder writes the errors of a connect handler (the backend cannot
// be dialled) as a Status.
type responder struct {
	w http.ResponseWriter
	r *http.Request
}

func (r *responder) Error(err error) { WriteError(r.w, r.r, err) }
