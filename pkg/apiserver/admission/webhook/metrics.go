package webhook

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// kube's admission webhook metrics, with its names, labels and buckets,
// so that dashboards made for kube-apiserver read this server's. type is
// "admit" for mutating webhooks and "validating" for validating ones;
// codes over 600 count as 600, as kube bounds them. A server's Source
// holds them; its dispatchers record in them.
type Metrics struct {
	webhookDuration                                     *prometheus.HistogramVec
	webhookRequests, webhookRejections, webhookFailOpen *prometheus.CounterVec
}

// NewMetrics creates the webhook metrics on reg (nil: registered
// nowhere).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	m.webhookDuration = metrics.NewHistogramVec(reg, "apiserver_admission_webhook_admission_duration_seconds",
		"Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
		[]float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25}, "name", "type", "operation", "rejected")
	m.webhookRequests = metrics.NewCounterVec(reg, "apiserver_admission_webhook_request_total",
		"Admission webhook request total, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.", "name", "type", "operation", "code", "rejected")
	m.webhookRejections = metrics.NewCounterVec(reg, "apiserver_admission_webhook_rejection_count",
		"Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.", "name", "type", "operation", "error_type", "rejection_code")
	m.webhookFailOpen = metrics.NewCounterVec(reg, "apiserver_admission_webhook_fail_open_count",
		"Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).", "name", "type")
	return m
}

func metricType(h *hook) string {
	if h.mutating {
		return "admit"
	}
	return "validating"
}

// observeCall records in m a call of h for a request of operation that took
// elapsed and ended with err (nil: the webhook allowed it), as kube's
// dispatchers do: a failure to call that the failure policy lets pass is
// not a rejection, and a request's own cancellation is no webhook's
// rejection.
func (m *Metrics) observeCall(h *hook, operation string, elapsed time.Duration, err error) {
	rejected, code := false, http.StatusOK
	reject := func(errorType string, code int) {
		m.webhookRejections.WithLabelValues(h.name, metricType(h), operation, errorType, strconv.Itoa(min(code, 600))).Inc()
	}
	var ce *callError
	var re *rejection
	switch {
	case err == nil:
	case errors.As(err, &ce):
		code = http.StatusInternalServerError
		if ce.status != nil {
			code = int(ce.status.ErrStatus.Code)
		}
		if p := h.failurePolicy; p == nil || *p != admissionregistrationv1.Ignore {
			rejected = true
			if !errors.Is(ce.reason, context.Canceled) {
				reject("calling_webhook_error", code)
			}
		}
	case errors.As(err, &re):
		rejected, code = true, int(re.status.ErrStatus.Code)
		reject("no_error", code)
	default:
		rejected, code = true, 0
		reject("apiserver_internal_error", 0)
	}
	m.webhookRequests.WithLabelValues(h.name, metricType(h), operation, strconv.Itoa(min(code, 600)), strconv.FormatBool(rejected)).Inc()
	m.webhookDuration.WithLabelValues(h.name, metricType(h), operation, strconv.FormatBool(rejected)).Observe(elapsed.Seconds())
}
