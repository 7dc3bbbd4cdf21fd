package handlers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// Metrics are a server's handler metrics (the watch metrics), with kube's
// names and labels; Scope.Metrics points at them.
type Metrics struct {
	watchEvents     *prometheus.CounterVec
	watchEventSizes *prometheus.HistogramVec
}

// NewMetrics creates the handler metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		watchEvents: metrics.NewCounterVec(reg, "apiserver_watch_events_total",
			"Number of events sent in watch clients", "group", "version", "resource"),
		watchEventSizes: metrics.NewHistogramVec(reg, "apiserver_watch_events_sizes",
			"Watch event size distribution in bytes",
			prometheus.ExponentialBuckets(1024, 2.0, 8), // 1 KiB .. 128 KiB
			"group", "version", "resource"),
	}
	return m
}

// unregistered are the metrics of a Scope built without any (tests).
var unregistered = NewMetrics(nil)

// watchMetrics are an endpoint's watch metrics, looked up once per watch.
type watchMetrics struct {
	events prometheus.Counter
	sizes  prometheus.Observer
}

func (s *Scope) watchMetrics() *watchMetrics {
	m := s.Metrics
	if m == nil {
		m = unregistered
	}
	r := s.Resource
	return &watchMetrics{
		events: m.watchEvents.WithLabelValues(r.Group, r.Version, r.Resource),
		sizes:  m.watchEventSizes.WithLabelValues(r.Group, r.Version, r.Resource),
	}
}
