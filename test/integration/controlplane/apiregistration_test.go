package controlplane

import "testing"

// TestAPIServiceTranscript replays requests kube-apiserver v1.37.2
// answered (testdata/apiregistration.json): validation errors, a Local
// APIService available at once, status kept by the main resource and
// spec by /status, a service reference stored (with its port defaulted),
// and the Local APIServices kept for the served groups, with the labels
// and managed fields kube-apiserver's autoregistration leaves.
func TestAPIServiceTranscript(t *testing.T) {
	replay(t, "apiregistration")
}
