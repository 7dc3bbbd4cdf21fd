package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// The request metrics, with kube's names and labels.
var (
	requestTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_request_total",
		Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_request_duration_seconds",
		Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
	}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"})
)

func init() { metrics.MustRegister(requestTotal, requestDuration) }

// instrument wraps the handler of one verb of one endpoint: it puts the
// request's Info in the context and records the request metrics.
func (s *Server) instrument(sc *handlers.Scope, verb string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &request.Info{Verb: verb, Resource: sc.Resource, Subresource: sc.Subresource}
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		reported := reportedVerb(verb, r)
		ctx := request.WithInfo(r.Context(), info)
		if reported != "WATCH" && s.requestTimeout > 0 {
			// A request that etcd cannot answer fails in time instead of
			// hanging (kube's --request-timeout); watches are long-running.
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.requestTimeout)
			defer cancel()
		}
		h.ServeHTTP(rec, r.WithContext(ctx))

		scope := "cluster"
		switch {
		case info.Name != "":
			scope = "resource"
		case info.Namespace != "":
			scope = "namespace"
		}
		dryRun := ""
		if len(r.URL.Query()["dryRun"]) > 0 {
			dryRun = "All"
		}
		labels := []string{reported, dryRun, sc.Resource.Group, sc.Resource.Version, sc.Resource.Resource, sc.Subresource, scope, "apiserver"}
		requestDuration.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
		requestTotal.WithLabelValues(append(labels, strconv.Itoa(rec.code))...).Inc()
	})
}

// reportedVerb is kube's verb label: the HTTP method, or LIST / WATCH /
// APPLY where the method does not tell.
func reportedVerb(verb string, r *http.Request) string {
	switch verb {
	case "list":
		if q := r.URL.Query().Get("watch"); q == "true" || q == "1" {
			return "WATCH"
		}
		return "LIST"
	case "watch":
		return "WATCH"
	case "patch":
		if r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			return "APPLY"
		}
	}
	return r.Method
}

// statusRecorder remembers the status code written.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

func (w *statusRecorder) WriteHeader(code int) {
	if !w.wroteHeader {
		w.code, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.wroteHeader = true
		f.Flush()
	}
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
