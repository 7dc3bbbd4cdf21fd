package apf

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// kube's apiserver_flowcontrol_* metrics (the main ones), with its names,
// labels and buckets.
var (
	rejectedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_rejected_requests_total",
		Help: "Number of requests rejected by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema", "reason"})
	dispatchedRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_flowcontrol_dispatched_requests_total",
		Help: "Number of requests executed by API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	inqueueRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_inqueue_requests",
		Help: "Number of requests currently pending in queues of the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	executingRequests = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_requests",
		Help: "Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	executingSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_executing_seats",
		Help: "Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
	}, []string{"priority_level", "flow_schema"})
	waitDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_flowcontrol_request_wait_duration_seconds",
		Help:    "Length of time a request spent waiting in its queue",
		Buckets: []float64{0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30},
	}, []string{"priority_level", "flow_schema", "execute"})
	nominalLimitSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_nominal_limit_seats",
		Help: "Nominal number of execution seats configured for each priority level",
	}, []string{"priority_level"})
	currentLimitSeats = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_flowcontrol_current_limit_seats",
		Help: "current derived number of execution seats available to each priority level",
	}, []string{"priority_level"})
)

func init() {
	metrics.MustRegister(rejectedRequests, dispatchedRequests, inqueueRequests, executingRequests, executingSeats,
		waitDuration, nominalLimitSeats, currentLimitSeats)
}
