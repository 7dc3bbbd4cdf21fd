package generic

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// objectCounts is kube's apiserver_storage_objects: the number of stored
// objects per resource, refreshed every CountMetricPollPeriod (-1 when
// the count failed).
var objectCounts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "apiserver_storage_objects",
	Help: "Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.",
}, []string{"resource"})

func init() { metrics.MustRegister(objectCounts) }

// startObservingCount counts the objects under prefix every period until
// the returned stop is called (stop waits for the counter to end).
func (e *Store) startObservingCount(prefix string, period time.Duration) func() {
	if period <= 0 {
		return func() {}
	}
	gauge := objectCounts.WithLabelValues(e.qualifiedResource.String())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(period)
		defer ticker.Stop()
		for {
			countCtx, done := context.WithTimeout(ctx, period)
			n, err := e.storage.Count(countCtx, prefix)
			done()
			if err != nil {
				n = -1
			}
			if ctx.Err() != nil {
				return
			}
			gauge.Set(float64(n))
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}
