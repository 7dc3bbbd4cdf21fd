package controlplane

import "testing"

// TestAdmissionRegistrationTranscript: webhook configurations, admission
// policies and their bindings as kube defaults and validates them,
// CEL expressions compiled and type-checked as kube does (its compile
// errors word for word), the warnings kube gives (rules naming resources
// webhooks never see).
func TestAdmissionRegistrationTranscript(t *testing.T) {
	t.Parallel()
	replay(t, "admissionregistration")
}
