package admission

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/metrics"
)

// podSecurityCounters are the plugin's metrics, under kube's names and
// labels (kube's library records them in component-base's registry,
// which /metrics here does not serve).
type podSecurityCounters struct {
	evaluations, exemptions, errors *prometheus.CounterVec
}

// newPodSecurityCounters creates the plugin's metrics on reg (nil:
// registered nowhere).
func newPodSecurityCounters(reg prometheus.Registerer) *podSecurityCounters {
	m := &podSecurityCounters{
		evaluations: metrics.NewCounterVec(reg, "pod_security_evaluations_total",
			"[ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.", "decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"),
		exemptions: metrics.NewCounterVec(reg, "pod_security_exemptions_total",
			"[ALPHA] Number of exempt requests, not counting ignored or out of scope requests.", "request_operation", "resource", "subresource"),
		errors: metrics.NewCounterVec(reg, "pod_security_errors_total",
			"[ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.", "fatal", "request_operation", "resource", "subresource"),
	}
	return m
}

// podSecurityRecorder counts one plugin's decisions; version is the
// server's Kubernetes version (a policy version newer is "future").
type podSecurityRecorder struct {
	*podSecurityCounters
	version psapi.Version
}

// evaluated counts a decision ("allow", "deny") of a mode ("enforce",
// "audit", "warn") at a level.
func (r podSecurityRecorder) evaluated(decision string, lv psapi.LevelVersion, mode string, req psRequest) {
	// As kube's recorder: privileged is always "latest", and a version
	// newer than the server's is "future".
	version := "latest"
	if !lv.Version.Latest() && lv.Level != psapi.LevelPrivileged {
		version = lv.Version.String()
		if r.version.Older(lv.Version) {
			version = "future"
		}
	}
	r.evaluations.WithLabelValues(decision, string(lv.Level), version, mode,
		operationLabel(req), resourceLabel(req.gr), req.attrs.Subresource).Inc()
}

func (r podSecurityRecorder) exempted(req psRequest) {
	r.exemptions.WithLabelValues(operationLabel(req), resourceLabel(req.gr), req.attrs.Subresource).Inc()
}

// failed counts an error; fatal when the request could not be evaluated
// at all.
func (r podSecurityRecorder) failed(fatal bool, req psRequest) {
	r.errors.WithLabelValues(strconv.FormatBool(fatal), operationLabel(req),
		resourceLabel(req.gr), req.attrs.Subresource).Inc()
}

func resourceLabel(gr schema.GroupResource) string {
	switch gr {
	case corev1.Resource("pods"):
		return "pod"
	case corev1.Resource("namespaces"):
		return "namespace"
	default:
		return "controller"
	}
}

func operationLabel(req psRequest) string { return strings.ToLower(string(req.attrs.Operation)) }
