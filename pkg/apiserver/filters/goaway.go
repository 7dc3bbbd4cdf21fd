package filters

import (
	"math/rand/v2"
	"net/http"
)

// WithProbabilisticGoaway closes, with probability chance, the HTTP/2
// connection of a request once its response is written, as kube's
// --goaway-chance: "Connection: close" makes Go's HTTP/2 server send
// GOAWAY, so the client finishes its streams in flight and reconnects,
// maybe through a load balancer to another replica. HTTP/1 requests are
// left alone (closing would cost them a handshake, and their clients
// spread with each new connection anyway). chance <= 0 returns h.
func WithProbabilisticGoaway(h http.Handler, chance float64) http.Handler {
	return withGoaway(h, chance, rand.Float64)
}

// withGoaway decides with next, a source of numbers in [0, 1).
func withGoaway(h http.Handler, chance float64, next func() float64) http.Handler {
	if chance <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && next() < chance {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
