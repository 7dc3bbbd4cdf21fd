package filters

import (
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// kube's request kinds of the in-flight limits.
const (
	readOnlyKind = "readOnly"
	mutatingKind = "mutating"
)

// Metrics are a server's in-flight metrics, with kube's names.
type Metrics struct {
	currentInflight *prometheus.GaugeVec
	droppedRequests *prometheus.CounterVec
}

// NewMetrics creates the in-flight metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	m.currentInflight = metrics.NewGaugeVec(reg, "apiserver_current_inflight_requests",
		"Maximal number of currently used inflight request limit of this apiserver per request kind in last second.", "request_kind")
	m.droppedRequests = metrics.NewCounterVec(reg, "apiserver_dropped_requests_total",
		"Number of requests dropped with 'Try again later' response.", "request_kind")
	return m
}

// InFlightConfig are the in-flight limits (kube's
// --max-requests-inflight and --max-mutating-requests-inflight; 0 is no
// limit).
type InFlightConfig struct {
	ReadOnly, Mutating int
	// QueueLength is how many requests of one user may wait; MaxWait how
	// long each may.
	QueueLength int
	MaxWait     time.Duration
}

// WithMaxInFlight bounds the requests running at once, read-only and
// mutating apart, sharing each limit fairly between users (see Limiter).
// Long-running requests are not counted, nor are system:masters and the
// health probes (kube's exempt priority level). A refused request gets
// 429 with Retry-After, in kube's words. m records the limits' use (nil:
// nowhere read).
func WithMaxInFlight(h http.Handler, cfg InFlightConfig, m *Metrics) http.Handler {
	if cfg.ReadOnly <= 0 && cfg.Mutating <= 0 {
		return h
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	limiter := func(limit int, kind string) *Limiter {
		if limit <= 0 {
			return nil
		}
		gauge := m.currentInflight.WithLabelValues(kind)
		return NewLimiter(limit, cfg.QueueLength, cfg.MaxWait, func(n int) { gauge.Set(float64(n)) })
	}
	readOnly, mutating := limiter(cfg.ReadOnly, readOnlyKind), limiter(cfg.Mutating, mutatingKind)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info, ok := request.InfoFrom(r.Context())
		u, _ := request.UserFrom(r.Context())
		if !ok || info.LongRunning() || exempt(u, info) {
			h.ServeHTTP(w, r)
			return
		}
		l, kind := mutating, mutatingKind
		if info.ReadOnly() {
			l, kind = readOnly, readOnlyKind
		}
		if l == nil {
			h.ServeHTTP(w, r)
			return
		}
		flow := ""
		if u != nil {
			flow = u.GetName()
		}
		if !l.Acquire(r.Context(), flow) {
			m.droppedRequests.WithLabelValues(kind).Inc()
			tooManyRequests(w)
			return
		}
		defer l.Release()
		h.ServeHTTP(w, r)
	})
}

// exempt: the requests kube's exempt priority level serves without
// limit: system:masters, and the health probes.
func exempt(u user.Info, info *request.Info) bool {
	if u != nil && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
		return true
	}
	if info.IsResourceRequest || info.Verb != "get" {
		return false
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if info.Path == p || len(info.Path) > len(p) && info.Path[:len(p)+1] == p+"/" {
			return true
		}
	}
	return false
}

// tooManyRequests is kube's 429: plain text, retry after a second.
func tooManyRequests(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}
