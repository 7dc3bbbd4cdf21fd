package cacher

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// Metrics are a server's watch cache metrics, with kube's names, shared
// by its caches (Config.Metrics).
type Metrics struct {
	eventsReceived, terminatedWatchers            *prometheus.CounterVec
	capacity, resourceVersion, registeredWatchers *prometheus.GaugeVec
	readWait                                      *prometheus.HistogramVec
}

// NewMetrics creates the watch cache metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		eventsReceived: metrics.NewCounterVec(reg, "apiserver_watch_cache_events_received_total",
			"Counter of events received in watch cache broken by resource type.", "group", "resource"),
		capacity: metrics.NewGaugeVec(reg, "apiserver_watch_cache_capacity",
			"Total capacity of watch cache broken by resource type.", "group", "resource"),
		resourceVersion: metrics.NewGaugeVec(reg, "apiserver_watch_cache_resource_version",
			"Current resource version of watch cache broken by resource type.", "group", "resource"),
		registeredWatchers: metrics.NewGaugeVec(reg, "apiserver_registered_watchers",
			"Number of currently registered watchers for a given resource.", "group", "resource"),
		terminatedWatchers: metrics.NewCounterVec(reg, "apiserver_terminated_watchers_total",
			"Counter of watchers closed due to unresponsiveness broken by resource type.", "group", "resource"),
		readWait: metrics.NewHistogramVec(reg, "apiserver_watch_cache_read_wait_seconds",
			"Histogram of time spent waiting for a watch cache to become fresh.",
			[]float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3}, "group", "resource"),
	}
	return m
}

// unregistered are the metrics of caches built without any (tests).
var unregistered = NewMetrics(nil)

// resourceMetrics are the metrics of one resource's cache.
type resourceMetrics struct {
	eventsReceived     prometheus.Counter
	capacity           prometheus.Gauge
	resourceVersion    prometheus.Gauge
	registeredWatchers prometheus.Gauge
	terminatedWatchers prometheus.Counter
	readWait           prometheus.Observer
}

// newResourceMetrics labels m's metrics of resource ("pods",
// "deployments.apps"); nil m: unregistered ones.
func newResourceMetrics(m *Metrics, resource string) *resourceMetrics {
	if m == nil {
		m = unregistered
	}
	res, group, _ := strings.Cut(resource, ".")
	return &resourceMetrics{
		eventsReceived:     m.eventsReceived.WithLabelValues(group, res),
		capacity:           m.capacity.WithLabelValues(group, res),
		resourceVersion:    m.resourceVersion.WithLabelValues(group, res),
		registeredWatchers: m.registeredWatchers.WithLabelValues(group, res),
		terminatedWatchers: m.terminatedWatchers.WithLabelValues(group, res),
		readWait:           m.readWait.WithLabelValues(group, res),
	}
}
