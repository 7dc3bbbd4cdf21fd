package handlers

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"

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
	writeBytes(w, out.MediaType, code, buf.Bytes())
}

func writeBytes(w http.ResponseWriter, mediaType string, code int, data []byte) {
	h := w.Header()
	h.Set("Content-Type", mediaType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	if _, err := w.Write(data); err != nil && err != io.EOF {
		slog.Debug("apiserver: writing a response", "error", err)
	}
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
