package apf

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// metricSet are a controller's apiserver_flowcontrol_* metrics: kube's
// main ones, with its names, labels and buckets.
type metricSet struct {
	rejectedRequests, dispatchedRequests                                                     *prometheus.CounterVec
	inqueueRequests, executingRequests, executingSeats, nominalLimitSeats, currentLimitSeats *prometheus.GaugeVec
	waitDuration                                                                             *prometheus.HistogramVec
}

// newMetrics creates the metrics on reg (nil: registered nowhere).
func newMetrics(reg prometheus.Registerer) *metricSet {
	m := &metricSet{}
	m.rejectedRequests = metrics.NewCounterVec(reg, "apiserver_flowcontrol_rejected_requests_total",
		"Number of requests rejected by API Priority and Fairness subsystem", "priority_level", "flow_schema", "reason")
	m.dispatchedRequests = metrics.NewCounterVec(reg, "apiserver_flowcontrol_dispatched_requests_total",
		"Number of requests executed by API Priority and Fairness subsystem", "priority_level", "flow_schema")
	m.inqueueRequests = metrics.NewGaugeVec(reg, "apiserver_flowcontrol_current_inqueue_requests",
		"Number of requests currently pending in queues of the API Priority and Fairness subsystem", "priority_level", "flow_schema")
	m.executingRequests = metrics.NewGaugeVec(reg, "apiserver_flowcontrol_current_executing_requests",
		"Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem", "priority_level", "flow_schema")
	m.executingSeats = metrics.NewGaugeVec(reg, "apiserver_flowcontrol_current_executing_seats",
		"Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem", "priority_level", "flow_schema")
	m.waitDuration = metrics.NewHistogramVec(reg, "apiserver_flowcontrol_request_wait_duration_seconds",
		"Length of time a request spent waiting in its queue",
		[]float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30}, "priority_level", "flow_schema", "execute")
	m.nominalLimitSeats = metrics.NewGaugeVec(reg, "apiserver_flowcontrol_nominal_limit_seats",
		"Nominal number of execution seats configured for each priority level", "priority_level")
	m.currentLimitSeats = metrics.NewGaugeVec(reg, "apiserver_flowcontrol_current_limit_seats",
		"current derived number of execution seats available to each priority level", "priority_level")
	return m
}
