package podspec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestProjectedCertificates: podCertificate and clusterTrustBundle
// sources of a projected volume; the messages are kube-apiserver
// v1.37.2's for the same pod.
func TestProjectedCertificates(t *testing.T) {
	t.Parallel()
	pod := validPod()
	cert := func(signer, keyType string, exp int32, paths ...string) corev1.VolumeProjection {
		c := &corev1.PodCertificateProjection{SignerName: signer, KeyType: keyType}
		if exp != 0 {
			c.MaxExpirationSeconds = ptr.To(exp)
		}
		for i, p := range paths {
			*[]*string{&c.CredentialBundlePath, &c.KeyPath, &c.CertificateChainPath}[i] = p
		}
		return corev1.VolumeProjection{PodCertificate: c}
	}
	bundle := func(name, signer, path string, sel *metav1.LabelSelector) corev1.VolumeProjection {
		b := &corev1.ClusterTrustBundleProjection{Path: path, LabelSelector: sel}
		if name != "" {
			b.Name = ptr.To(name)
		}
		if signer != "" {
			b.SignerName = ptr.To(signer)
		}
		return corev1.VolumeProjection{ClusterTrustBundle: b}
	}
	annotated := cert("example.com/foo", "RSA4096", 0, "a")
	annotated.PodCertificate.UserAnnotations = map[string]string{"Bad Key": "v", "ok.example.com/x": "y"}
	ab := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "v1", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		cert("example.com/foo", "ED25519", 3599, "creds.pem"),
		cert("example.com/foo", "RSA3072", 7862401, "", "k.pem", "c.pem"),
		cert("kubernetes.io/foo", "ECDSAP256", 86401, "", "k.pem"),
		cert("bad", "bogus", 0),
		cert("", "", 0, "/abs", "../x", "c.pem"),
		annotated,
		bundle("", "", "ctb", nil),
		bundle("x", "example.com/foo", "ctb2", nil),
		bundle("", "example.com/foo", "/abs", nil),
		bundle("Bad_Name", "", "ctb3", nil),
		bundle("", "bad", "ctb4", ab),
		bundle("x", "", "ctb5", ab),
		bundle("", "example.com/foo", "", &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "b"}}),
	}}}}}
	p := "spec.volumes[0].projected"
	s := p + ".sources"
	const qualified = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
	const keyTypes = `supported values: "RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"`
	const signerForm = `must be a fully qualified domain and path of the form 'example.com/signer-name'`
	checkErrors(t, pod, []string{
		s + `[0].podCertificate.maxExpirationSeconds: Invalid value: 3599: if provided, maxExpirationSeconds must be >= 3600`,
		s + `[1].podCertificate.maxExpirationSeconds: Invalid value: 7862401: if provided, maxExpirationSeconds must be <= 7862400`,
		s + `[2].podCertificate.maxExpirationSeconds: Invalid value: 86401: if provided, maxExpirationSeconds must be <= 86400`,
		p + `: Invalid value: "k.pem": conflicting duplicate paths`,
		s + `[3].podCertificate.signerName: Invalid value: "bad": ` + signerForm,
		s + `[3].podCertificate.keyType: Unsupported value: "bogus": ` + keyTypes,
		s + `[3].podCertificate: Required value: specify at least one of credentialBundlePath, keyPath, and certificateChainPath`,
		s + `[4].podCertificate.signerName: Required value`,
		s + `[4].podCertificate.keyType: Unsupported value: "": ` + keyTypes,
		s + `[4].podCertificate.credentialBundlePath: Invalid value: "/abs": must be a relative path`,
		s + `[4].podCertificate.keyPath: Invalid value: "../x": must not contain '..'`,
		p + `: Invalid value: "c.pem": conflicting duplicate paths`,
		s + `[5].podCertificate.userAnnotations: Invalid value: "bad key": ` + qualified,
		s + `[6].clusterTrustBundle: Required value: either name or signerName must be specified`,
		s + `[7].clusterTrustBundle: Invalid value: {"Name":"x","SignerName":"example.com/foo","LabelSelector":null,"Optional":null,"Path":"ctb2","User":null}: only one of name and signerName may be used`,
		s + `[8].clusterTrustBundle.path: Invalid value: "/abs": must be a relative path`,
		p + `: Invalid value: "/abs": conflicting duplicate paths`,
		s + `[9].clusterTrustBundle.name: Invalid value: "Bad_Name": not a valid clustertrustbundlename: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		s + `[10].clusterTrustBundle.signerName: Invalid value: "bad": ` + signerForm,
		s + `[11].clusterTrustBundle.labelSelector: Invalid value: {"matchLabels":{"a":"b"}}: labelSelector must be unset if name is specified`,
		s + `[12].clusterTrustBundle.labelSelector.matchLabels: Invalid value: "bad key!": ` + qualified,
		s + `[12].clusterTrustBundle.path: Required value`,
	})
}
