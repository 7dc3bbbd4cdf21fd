package filters

import "net/http"

// WithCacheControl marks every response "Cache-Control: no-cache, private"
// unless its handler says otherwise (aggregated discovery is public), as
// kube's filter does: API responses are per user and change at any time.
func WithCacheControl(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache, private")
		h.ServeHTTP(w, r)
	})
}
