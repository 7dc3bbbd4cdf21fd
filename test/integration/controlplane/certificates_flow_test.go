package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// testCA is a CA made for one test, to sign what a signer would.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// issue signs a certificate for pub, valid from notBefore for lifetime.
func (ca *testCA) issue(t *testing.T, pub crypto.PublicKey, notBefore time.Time, lifetime time.Duration) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "issued"},
		NotBefore: notBefore, NotAfter: notBefore.Add(lifetime), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// certificateRequest returns a PKCS#10 request (DER) signed by key.
func certificateRequest(t *testing.T, key crypto.Signer, cn string) []byte {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestCSRApproveAndSign goes through a CSR's life as kubectl certificate
// approve and a signer do: create (the requestor is the user, whatever
// the client claims), approve through /approval, issue through /status;
// the server stamps the conditions' times.
func TestCSRApproveAndSign(t *testing.T) {
	t.Parallel()
	csrs := clientset(t).CertificatesV1().CertificateSigningRequests()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	name := testserver.NamespaceName(t)
	csr, err := csrs.Create(ctx(t), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: certificateRequest(t, key, "alice")}),
			SignerName:        "example.com/test",
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To[int32](3600),
			Username:          "mallory",
			Groups:            []string{"system:masters"},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The client is the administrator of the admin token; authentication
	// adds system:authenticated, as kube's.
	admin := app.AdminTokenUser
	wantGroups := strings.Join(append(admin.Groups, "system:authenticated"), ",")
	if csr.Spec.Username != admin.Name || csr.Spec.UID != admin.UID || strings.Join(csr.Spec.Groups, ",") != wantGroups {
		t.Errorf("requestor %q %q %v, want the administrator's", csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups)
	}

	// The main endpoint cannot approve.
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	if got, err := csrs.Update(ctx(t), csr, metav1.UpdateOptions{}); err != nil || len(got.Status.Conditions) != 0 {
		t.Fatalf("update with conditions: %v %+v", err, got.Status)
	}
	csr.Status.Conditions[0].Reason = "ByTest"
	approved, err := csrs.UpdateApproval(ctx(t), name, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := approved.Status.Conditions
	if len(c) != 1 || c[0].Type != certificatesv1.CertificateApproved || c[0].LastUpdateTime.IsZero() || c[0].LastTransitionTime.IsZero() {
		t.Fatalf("approved conditions: %+v", c)
	}

	// /status issues, and cannot take the approval back.
	ca := newTestCA(t)
	approved.Status.Certificate = ca.issue(t, key.Public(), time.Now(), time.Hour)
	approved.Status.Conditions = nil
	if _, err := csrs.UpdateStatus(ctx(t), approved, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `updates may not remove a condition of type "Approved"`) {
		t.Fatalf("status without the approval: %v", err)
	}
	approved.Status.Conditions = c
	issued, err := csrs.UpdateStatus(ctx(t), approved, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(issued.Status.Certificate) != string(approved.Status.Certificate) || !issued.Status.Conditions[0].LastTransitionTime.Equal(&c[0].LastTransitionTime) {
		t.Errorf("issued: %+v", issued.Status)
	}

	// kubectl get csr --field-selector spec.signerName=...
	list, err := csrs.List(ctx(t), metav1.ListOptions{FieldSelector: "spec.signerName=example.com/test"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != name {
		t.Fatalf("select by signer: %v %v", err, list)
	}
}

// TestPodCertificateRequestIssue: a signer issues a pod certificate for
// the requested key, with consistent times; an issued request is final.
func TestPodCertificateRequestIssue(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	pcrs := clientset(t).CertificatesV1().PodCertificateRequests(ns)
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pcr, err := pcrs.Create(ctx(t), &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "p1"},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/issue-test", PodName: "p-issue", PodUID: "pod-uid", ServiceAccountName: "default", ServiceAccountUID: "sa-uid",
			NodeName: "node-1", NodeUID: "node-uid", StubPKCS10Request: certificateRequest(t, key, ""),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pcr.Spec.MaxExpirationSeconds == nil || *pcr.Spec.MaxExpirationSeconds != 86400 {
		t.Errorf("maxExpirationSeconds %v, want the default 86400", pcr.Spec.MaxExpirationSeconds)
	}
	ca := newTestCA(t)
	notBefore := time.Now().Truncate(time.Second)
	issued := func(lifetime time.Duration) *certificatesv1.PodCertificateRequest {
		p := pcr.DeepCopy()
		p.Status = certificatesv1.PodCertificateRequestStatus{
			Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
				Reason: "Signed", LastTransitionTime: metav1.Now()}},
			CertificateChain: string(ca.issue(t, pub, notBefore, lifetime)),
			NotBefore:        ptr.To(metav1.NewTime(notBefore)),
			NotAfter:         ptr.To(metav1.NewTime(notBefore.Add(lifetime))),
			BeginRefreshAt:   ptr.To(metav1.NewTime(notBefore.Add(lifetime / 2))),
		}
		return p
	}
	_, err = pcrs.UpdateStatus(ctx(t), issued(30*time.Minute), metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "leaf certificate lifetime must be >= 1 hour") {
		t.Fatalf("a 30 minute certificate: %v", err)
	}
	done, err := pcrs.UpdateStatus(ctx(t), issued(2*time.Hour), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status.CertificateChain == "" || !done.Status.NotAfter.Equal(ptr.To(metav1.NewTime(notBefore.Add(2*time.Hour)))) {
		t.Errorf("issued status: %+v", done.Status)
	}
	done.Status.Conditions[0].Reason = "Again"
	_, err = pcrs.UpdateStatus(ctx(t), done, metav1.UpdateOptions{})
	if se, ok := err.(*apierrors.StatusError); !ok || se.ErrStatus.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(se.ErrStatus.Message, "immutable after PodCertificateRequest is issued, denied, or failed") {
		t.Errorf("changing an issued request: %v", err)
	}
}
