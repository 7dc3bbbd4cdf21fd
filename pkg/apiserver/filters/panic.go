package filters

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// WithPanicRecovery turns a panic in a handler into a 500 Status (when
// nothing was written yet) and a log line with the stack; the server keeps
// serving.
func WithPanicRecovery(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := NewResponseRecorder(w)
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's own way to abort a response
			}
			slog.Error("apiserver: panic serving a request", "method", r.Method, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rw.Code() == 0 {
				handlers.WriteError(w, r, apierrors.NewInternalError(fmt.Errorf("the server panicked serving the request")))
			}
		}()
		h.ServeHTTP(rw, r)
	})
}
