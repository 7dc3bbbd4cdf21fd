package certificates_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"go.uber.org/goleak"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

var stamp = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// csrDER is a certificate request (DER) for a new Ed25519 key.
func csrDER(t *testing.T) []byte {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "registrytest"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// caPEM is a self-signed CA certificate (PEM).
func caPEM(t *testing.T) string {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "registrytest-ca"},
		NotBefore: stamp.Time, NotAfter: stamp.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// TestRegistry runs the registry's conformance suite on the group's
// kinds, with their status subresources.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, certificates.NewRESTStorageProvider(), []registrytest.Case{
		{Resource: "certificatesigningrequests", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			request := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csrDER(t)})
			valid := func(name string, request []byte) runtime.Object {
				return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: "example.com/signer",
						Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}}}
			}
			csr := func(obj runtime.Object) *certificatesv1.CertificateSigningRequest {
				return obj.(*certificatesv1.CertificateSigningRequest)
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, request) },
				Invalid:                  func(name string) runtime.Object { return valid(name, []byte("not a request")) },
				AllowUnconditionalUpdate: true,
				Skip: map[string]string{"update/invalid": "kube's update keeps a request's spec (PrepareForUpdate): " +
					"an invalid one is dropped, not refused"},
				// The spec never changes: an update keeps it.
				Status: &registrytest.StatusCheck{
					Storage: registrytest.StatusStorage(t, info, "certificatesigningrequests"),
					ChangeStatus: func(obj runtime.Object) {
						csr(obj).Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
							Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "Registrytest",
							LastUpdateTime: stamp, LastTransitionTime: stamp}}
					},
				},
			}
		}},
		{Resource: "clustertrustbundles", Tester: func(t *testing.T, _ rest.APIGroupInfo) registrytest.Tester {
			bundle := caPEM(t)
			valid := func(name, bundle string) runtime.Object {
				return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: bundle}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, bundle) },
				Invalid: func(name string) runtime.Object { return valid(name, "not a bundle") },
			}
		}},
		{Resource: "podcertificaterequests", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			stub := csrDER(t)
			valid := func(name string, maxExpiration int32) runtime.Object {
				return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: certificatesv1.PodCertificateRequestSpec{
						SignerName: "example.com/signer", MaxExpirationSeconds: ptr.To(maxExpiration),
						PodName: "pod-1", PodUID: "pod-uid-1", ServiceAccountName: "default", ServiceAccountUID: "sa-uid-1",
						NodeName: "node-1", NodeUID: "node-uid-1", StubPKCS10Request: stub}}
			}
			pcr := func(obj runtime.Object) *certificatesv1.PodCertificateRequest {
				return obj.(*certificatesv1.PodCertificateRequest)
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, 86400) },
				Invalid: func(name string) runtime.Object { return valid(name, 1) },
				Skip: map[string]string{"list/selectors": "kube's field labels of podcertificaterequests " +
					"leave out metadata.namespace, which the case selects on"},
				Status: &registrytest.StatusCheck{
					Storage: registrytest.StatusStorage(t, info, "podcertificaterequests"),
					ChangeStatus: func(obj runtime.Object) {
						pcr(obj).Status.Conditions = []metav1.Condition{{
							Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue,
							Reason: "Registrytest", Message: "denied by the suite", LastTransitionTime: stamp}}
					},
				},
			}
		}},
	})
}
