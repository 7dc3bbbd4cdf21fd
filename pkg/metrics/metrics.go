// Package metrics holds the Prometheus registries /metrics serves. Each
// server has its own registry (New), made by cmd and handed down to the
// parts that record, which create their metric vectors on it when the
// server is built: servers side by side in one process (tests, embedded
// HA) count apart. The Go runtime and process collectors are the
// process's by nature, and every server's /metrics serves them too.
package metrics

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// New is a server's registry.
func New() *prometheus.Registry { return prometheus.NewRegistry() }

// process is the process-wide registry: the Go runtime and process
// collectors only; every other metric is a server's.
var process = sync.OnceValue(func() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
})

// Register registers cs with reg; a nil reg (a part built without a
// server, in a unit test) leaves them unregistered: they count, and no
// one reads them.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) {
	if reg != nil {
		reg.MustRegister(cs...)
	}
}

// Handler serves reg's metrics with the process's.
func Handler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(prometheus.Gatherers{process(), reg}, promhttp.HandlerOpts{})
}

// The constructors below create a metric vector and register it on reg
// (nil: nowhere, as Register): each part of the server declares its
// metrics by kube's name, help and labels in one line each, instead of
// an options struct and a separate Register call apiece.

// NewCounterVec returns the counter vector name, labelled by labels.
func NewCounterVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	Register(reg, v)
	return v
}

// NewGaugeVec returns the gauge vector name, labelled by labels.
func NewGaugeVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.GaugeVec {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	Register(reg, v)
	return v
}

// NewHistogramVec returns the histogram vector name with buckets,
// labelled by labels.
func NewHistogramVec(reg prometheus.Registerer, name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	Register(reg, v)
	return v
}
