package filters

import (
	"fmt"
	"net/http"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// WithWarnings collects the warnings of a request and sends them as
// Warning headers (kube's format: 299 - "text") before the status line.
func WithWarnings(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		warnings := &request.Warnings{}
		ww := &warningWriter{ResponseRecorder: ResponseRecorder{ResponseWriter: w}, warnings: warnings}
		h.ServeHTTP(ww, r.WithContext(request.WithWarnings(r.Context(), warnings)))
	})
}

type warningWriter struct {
	ResponseRecorder
	warnings *request.Warnings
}

func (w *warningWriter) WriteHeader(code int) {
	if w.code == 0 {
		for _, text := range w.warnings.List() {
			w.Header().Add("Warning", fmt.Sprintf("299 - %q", text))
		}
	}
	w.ResponseRecorder.WriteHeader(code)
}

func (w *warningWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseRecorder.Write(b)
}

func (w *warningWriter) Flush() {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.ResponseRecorder.Flush()
}
