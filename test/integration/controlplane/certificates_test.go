package controlplane

import "testing"

// TestCertificatesTranscript: certificatesigningrequests (requestor from
// the user, the immutable spec, approval only through /approval, the
// certificate only through /status, kube's messages),
// clustertrustbundles and podcertificaterequests as kube serves them.
func TestCertificatesTranscript(t *testing.T) {
	t.Parallel()
	replay(t, "certificates")
}
