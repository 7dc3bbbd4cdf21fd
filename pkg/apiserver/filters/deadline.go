package filters

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// WithRequestDeadline bounds every request but the long-running ones
// (request.Info.LongRunning) by max (kube's --request-timeout), or by the
// shorter ?timeout= the client asks for: a request that etcd cannot answer
// then fails in time instead of hanging. A timeout that does not parse is
// a 400, as kube answers it. max <= 0 sets no deadline.
func WithRequestDeadline(h http.Handler, max time.Duration) http.Handler {
	if max <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		if !ok || info.LongRunning() {
			h.ServeHTTP(w, r)
			return
		}
		timeout := max
		if v := r.URL.Query().Get("timeout"); v != "" {
			asked, err := time.ParseDuration(v)
			if err != nil {
				handlers.WriteError(w, r, apierrors.NewBadRequest(
					fmt.Sprintf("invalid timeout specified in the request URL - %v", err)))
				return
			}
			if asked > 0 && asked < max {
				timeout = asked
			}
		}
		ctx, cancel := context.WithDeadline(r.Context(), receivedAt(r).Add(timeout))
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
