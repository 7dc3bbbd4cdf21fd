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
	m.rejectedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_rejected_requests_total",
		Help: "Number of requests rejected by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema", "reason"})
	m.dispatchedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_dispatched_requests_total",
		Help: "Number of requests executed by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	m.inqueueRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_inqueue_requests",
		Help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	m.executingRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_requests",
		Help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	m.executingSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_seats",
		Help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	m.waitDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_request_wait_duration_seconds",
		Help:    "Length of time a request spent waiting in its queue",
		Buckets: []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30},
	}, []string{"priority_level", "flow_schema", "execute"})
	m.nominalLimitSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_nominal_limit_seats",
		Help: "Nominal number of execution seats configured for each priority level",
	}, []string{"priority_level"})
	m.currentLimitSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_limit_seats",
		Help: "current derived number of execution seats available to each priority level",
	}, []string{"priority_level"})
	metrics.Register(reg, m.rejectedRequests, m.dispatchedRequests, m.inqueueRequests, m.executingRequests, m.executingSeats,
		m.waitDuration, m.nominalLimitSeats, m.currentLimitSeats)
	return m
}
