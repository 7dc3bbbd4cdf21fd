package handlers

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
)

// writeObject encodes obj (with its TypeMeta set) as out says and writes
// it with the status code.
func writeObject(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, obj runtime.Object) {
	var buf bytes.Buffer
	encoder := out.Info.Serializer
	if out.Pretty && out.Info.PrettySerializer != nil {
		encoder = out.Info.PrettySerializer
	}
	if err := encoder.Encode(obj, &buf); err != nil {
		slog.Error("apiserver: encoding a response", "error", err, "type", typeName(obj))
		code = http.StatusInternalServerError
		buf.Reset()
		// Status always encodes; this cannot loop.
		_ = json.NewEncoder(&buf).Encode(StatusOf(err))
		out.MediaType = negotiation.MediaTypeJSON
	}
	writeBytes(w, r, out.MediaType, code, buf.Bytes())
}

// writeBytes writes a whole response body, compressed when it is large
// and the client accepts gzip.
func writeBytes(w http.ResponseWriter, r *http.Request, mediaType string, code int, data []byte) {
	bw := newBodyWriter(w, r, mediaType, code)
	if !bw.gzip || len(data) <= gzipThreshold {
		bw.start(len(data))
	}
	bw.Write(data)
	bw.Close()
}

// WriteBody writes a whole response body of mediaType as the handlers do
// (compressed when large and the client accepts gzip). A Cache-Control
// header already set is kept.
func WriteBody(w http.ResponseWriter, r *http.Request, mediaType string, code int, data []byte) {
	writeBytes(w, r, mediaType, code, data)
}

func typeName(obj runtime.Object) string {
	if obj == nil {
		return "<nil>"
	}
	return obj.GetObjectKind().GroupVersionKind().String()
}

// WriteObject writes obj as negotiated (for discovery and other documents
// that are not resources).
func WriteObject(w http.ResponseWriter, r *http.Request, out negotiation.Output, code int, obj runtime.Object) {
	writeObject(w, r, out, code, obj)
}

// gzipThreshold is kube's: a response body larger than this is compressed
// when the client accepts gzip (client-go does), a smaller one is not.
const gzipThreshold = 128 * 1024

// gzipPool holds writers at kube's level: 1, the fastest, whose ratio is
// close to the best on API objects.
var gzipPool = sync.Pool{New: func() any {
	gw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return gw
}}

// acceptsGzip is kube's reading of Accept-Encoding: a bare "gzip" token
// (no weights).
func acceptsGzip(r *http.Request) bool {
	for _, token := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(token) == "gzip" {
			return true
		}
	}
	return false
}

// bodyWriter writes a response body of unknown length as kube's
// deferredResponseWriter does: when the client accepts gzip it holds the
// first gzipThreshold bytes back, then starts a compressed response if
// there are more, or writes them plainly (with Content-Length) at Close.
// Without gzip the body streams at once.
type bodyWriter struct {
	w         http.ResponseWriter
	mediaType string
	code      int
	gzip      bool
	held      []byte
	started   bool
	out       io.Writer
	gw        *gzip.Writer
	err       error
}

func newBodyWriter(w http.ResponseWriter, r *http.Request, mediaType string, code int) *bodyWriter {
	return &bodyWriter{w: w, mediaType: mediaType, code: code, gzip: acceptsGzip(r)}
}

// Write writes p, or holds it back while the compression is undecided.
// After a failed write (the client went away) it returns the error.
func (b *bodyWriter) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if !b.started {
		if b.gzip && len(b.held)+len(p) <= gzipThreshold {
			b.held = append(b.held, p...)
			return len(p), nil
		}
		b.start(-1)
		if len(b.held) > 0 {
			held := b.held
			b.held = nil
			if _, b.err = b.out.Write(held); b.err != nil {
				return 0, b.err
			}
		}
	}
	var n int
	n, b.err = b.out.Write(p)
	return n, b.err
}

// start writes the header: compressed when gzip is accepted and the body
// exceeds the threshold, with Content-Length when length >= 0.
func (b *bodyWriter) start(length int) {
	b.started = true
	h := b.w.Header()
	h.Set("Content-Type", b.mediaType)
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache, private")
	}
	b.out = b.w
	switch {
	case b.gzip && length < 0:
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		b.gw = gzipPool.Get().(*gzip.Writer)
		b.gw.Reset(b.w)
		b.out = b.gw
	case length >= 0:
		h.Set("Content-Length", strconv.Itoa(length))
	}
	b.w.WriteHeader(b.code)
}

// Close writes what is held back (plainly: it is small) and ends the
// compressed stream.
func (b *bodyWriter) Close() error {
	if !b.started {
		b.start(len(b.held))
		_, b.err = b.out.Write(b.held)
		b.held = nil
	}
	if b.gw != nil {
		if err := b.gw.Close(); err != nil && b.err == nil {
			b.err = err
		}
		b.gw.Reset(nil)
		gzipPool.Put(b.gw)
		b.gw = nil
	}
	if b.err != nil && b.err != io.EOF {
		slog.Debug("apiserver: writing a response", "error", b.err)
	}
	return b.err
}
