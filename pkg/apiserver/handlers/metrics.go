package handlers

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// The watch metrics, with kube's names and labels.
var (
	watchEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_watch_events_total",
		Help: "Number of events sent in watch clients",
	}, []string{"group", "version", "resource"})
	watchEventSizes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_watch_events_sizes",
		Help:    "Watch event size distribution in bytes",
		Buckets: prometheus.ExponentialBuckets(1024, 2.0, 8), // 1 KiB .. 128 KiB
	}, []string{"group", "version", "resource"})
)

func init() { metrics.MustRegister(watchEvents, watchEventSizes) }

// watchMetrics are an endpoint's watch metrics, looked up once per watch.
type watchMetrics struct {
	events prometheus.Counter
	sizes  prometheus.Observer
}

func (s *Scope) watchMetrics() *watchMetrics {
	r := s.Resource
	return &watchMetrics{
		events: watchEvents.WithLabelValues(r.Group, r.Version, r.Resource),
		sizes:  watchEventSizes.WithLabelValues(r.Group, r.Version, r.Resource),
	}
}
