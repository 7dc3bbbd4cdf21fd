package generic

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/periodic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Metrics are a server's registry metrics: kube's
// apiserver_storage_objects, the number of stored objects per resource,
// refreshed every CountMetricPollPeriod (-1 when the count failed).
type Metrics struct {
	objectCounts *prometheus.GaugeVec
}

// NewMetrics creates the registry metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{objectCounts: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_storage_objects",
		Help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
	}, []string{"resource"})}
	metrics.Register(reg, m.objectCounts)
	return m
}

// unregistered are the metrics of stores built without any (tests).
var unregistered = NewMetrics(nil)

// startObservingCount counts the objects under prefix now and every
// period until the returned stop is called (stop waits for a count in
// progress), in m (nil: unregistered).
func (e *Store) startObservingCount(m *Metrics, prefix string, period time.Duration) func() {
	if period <= 0 {
		return func() {}
	}
	if m == nil {
		m = unregistered
	}
	gauge := m.objectCounts.WithLabelValues(e.qualifiedResource.String())
	ctx, cancel := context.WithCancel(context.Background())
	wait := periodic.Every(ctx, 0, period, func() {
		countCtx, done := context.WithTimeout(ctx, period)
		n, err := e.storage.Count(countCtx, prefix)
		done()
		if err != nil {
			n = -1
		}
		if ctx.Err() == nil {
			gauge.Set(float64(n))
			e.counted.Store(n)
		}
	})
	return func() { cancel(); wait() }
}

// Stats implements storage.StatsReporter for API Priority and Fairness:
// the cache's figures, or without a cache the last count of the objects
// in etcd (apiserver_storage_objects', as kube's estimator reads it; no
// sizes nor watchers then).
func (e *Store) Stats() (storage.Stats, bool) {
	if r, ok := e.storage.(storage.StatsReporter); ok {
		return r.Stats()
	}
	if e.counted == nil {
		return storage.Stats{}, false // not built over a storage
	}
	n := e.counted.Load()
	if n < 0 {
		return storage.Stats{}, false
	}
	return storage.Stats{ObjectCount: n}, true
}
