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
