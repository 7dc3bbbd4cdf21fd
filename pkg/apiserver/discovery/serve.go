package discovery

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
)

// ServeAggregated answers r with a when r asks for the aggregated
// document, and reports whether it did; otherwise the caller serves the
// unaggregated one. As kube's: ETag (the same for every media type),
// Vary: Accept, Cache-Control: public, and 304 Not Modified without a body
// when If-None-Match names the current ETag.
func ServeAggregated(w http.ResponseWriter, r *http.Request, a *Aggregated) bool {
	out, ok := negotiation.NegotiateAggregatedDiscovery(r)
	if !ok {
		return false
	}
	etag := strconv.Quote(a.ETag())
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	encoder := out.Info.Serializer
	if out.Pretty {
		encoder = out.Info.PrettySerializer
	}
	var buf bytes.Buffer
	if err := encoder.Encode(a.List(), &buf); err != nil {
		// The document is built and checked at start: this is a bug.
		slog.Error("discovery: encoding the aggregated document", "error", err)
		h.Del("ETag")
		handlers.WriteError(w, r, err)
		return true
	}
	handlers.WriteBody(w, r, out.MediaType, http.StatusOK, buf.Bytes())
	return true
}
