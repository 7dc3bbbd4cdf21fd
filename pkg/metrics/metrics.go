// Package metrics holds the Prometheus registry that every part of the
// server registers its metrics with and /metrics serves. Like kube's legacy
// registry it is one per process: servers started side by side in one test
// binary share it.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry is the process's metrics registry, with the Go runtime and
// process collectors.
var Registry = prometheus.NewRegistry()

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
}

// MustRegister registers collectors with Registry, at package init.
func MustRegister(cs ...prometheus.Collector) { Registry.MustRegister(cs...) }
