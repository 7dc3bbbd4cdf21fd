package apiserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/filters"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// requestMetrics are a server's request metrics, with kube's names and
// labels.
type requestMetrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newRequestMetrics creates the request metrics on reg.
func newRequestMetrics(reg prometheus.Registerer) *requestMetrics {
	m := &requestMetrics{}
	m.total = metrics.NewCounterVec(reg, "apiserver_request_total",
		"Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.", "verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code")
	m.duration = metrics.NewHistogramVec(reg, "apiserver_request_duration_seconds",
		"Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
		[]float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60}, "verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
	return m
}

// instrument records the request metrics of one endpoint's handler,
// labelled as the request's Info and the endpoint's scope say.
func (s *Server) instrument(sc *handlers.Scope, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := filters.NewResponseRecorder(w)
		h.ServeHTTP(rec, r)
		info, ok := request.InfoFrom(r.Context())
		if !ok {
			return
		}
		dryRun := ""
		if len(r.URL.Query()["dryRun"]) > 0 {
			dryRun = "All"
		}
		code := rec.Code()
		if code == 0 {
			code = http.StatusOK
		}
		verb := reportedVerb(info, r)
		if isConnect(sc.Storage) {
			verb = "CONNECT" // as kube reports its connect verbs and pods/log
		}
		labels := []string{verb, dryRun, sc.Resource.Group, sc.Resource.Version, sc.Resource.Resource, sc.Subresource, scope(info), "apiserver"}
		s.requestMetrics.duration.WithLabelValues(labels...).Observe(time.Since(start).Seconds())
		s.requestMetrics.total.WithLabelValues(append(labels, strconv.Itoa(code))...).Inc()
	})
}

// reportedVerb is kube's verb label: the HTTP method, or LIST / WATCH /
// APPLY where the method does not tell.
func reportedVerb(info *request.Info, r *http.Request) string {
	switch info.Verb {
	case "list":
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

// scope is kube's scope label of a request.
func scope(info *request.Info) string {
	switch {
	case info.Name != "" || info.Verb == "create":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	case info.IsResourceRequest:
		return "cluster"
	}
	return ""
}

// isConnect reports a connect subresource or one read with options
// (pods/log).
func isConnect(st rest.Storage) bool {
	_, connect := st.(rest.Connecter)
	_, withOptions := st.(rest.GetterWithOptions)
	return connect || withOptions
}
