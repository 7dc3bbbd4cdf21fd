package admission

import (
	"strconv"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"

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
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_evaluations_total",
			Help: "[ALPHA] Number of policy evaluations that occurred, not counting ignored or exempt requests.",
		}, []string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"}),
		exemptions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_exemptions_total",
			Help: "[ALPHA] Number of exempt requests, not counting ignored or out of scope requests.",
		}, []string{"request_operation", "resource", "subresource"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pod_security_errors_total",
			Help: "[ALPHA] Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.",
		}, []string{"fatal", "request_operation", "resource", "subresource"}),
	}
	metrics.Register(reg, m.evaluations, m.exemptions, m.errors)
	return m
}

// podSecurityRecorder counts one plugin's decisions; version is the
// server's Kubernetes version (a policy version newer is "future").
type podSecurityRecorder struct {
	*podSecurityCounters
	version psapi.Version
}

var _ psmetrics.Recorder = podSecurityRecorder{}

func (r podSecurityRecorder) RecordEvaluation(decision psmetrics.Decision, policy psapi.LevelVersion, mode psmetrics.Mode, attrs psapi.Attributes) {
	// As kube's recorder: privileged is always "latest", and a version
	// newer than the library's is "future".
	version := "latest"
	if !policy.Version.Latest() && policy.Level != psapi.LevelPrivileged {
		version = policy.Version.String()
		if r.version.Older(policy.Version) {
			version = "future"
		}
	}
	r.evaluations.WithLabelValues(string(decision), string(policy.Level), version, string(mode),
		operationLabel(attrs.GetOperation()), resourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}

func (r podSecurityRecorder) RecordExemption(attrs psapi.Attributes) {
	r.exemptions.WithLabelValues(operationLabel(attrs.GetOperation()), resourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}

func (r podSecurityRecorder) RecordError(fatal bool, attrs psapi.Attributes) {
	r.errors.WithLabelValues(strconv.FormatBool(fatal), operationLabel(attrs.GetOperation()),
		resourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}

func resourceLabel(r schema.GroupVersionResource) string {
	switch r.GroupResource() {
	case corev1.Resource("pods"):
		return "pod"
	case corev1.Resource("namespaces"):
		return "namespace"
	default:
		return "controller"
	}
}

func operationLabel(op admissionv1.Operation) string { return strings.ToLower(string(op)) }
