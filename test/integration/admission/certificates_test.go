package admission

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// csrPEM is a PEM certificate request for cn in groups.
func csrPEM(t *testing.T, cn string, groups ...string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: groups}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

// caPEM is a self-signed CA certificate.
func caPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func csrOf(t *testing.T, name, signer string, groups ...string) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: csrPEM(t, "someone", groups...), SignerName: signer,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
}

// impersonating is a clientset acting as user, whose permissions are
// rules (a ClusterRole bound to it, removed at cleanup); grant adds
// rules later.
func impersonating(t *testing.T, user string, rules ...rbacv1.PolicyRule) (kubernetes.Interface, func(...rbacv1.PolicyRule)) {
	t.Helper()
	return impersonatingOn(t, config(), user, rules...)
}

// impersonatingOn is impersonating on the server cfg reaches as its
// administrator.
func impersonatingOn(t *testing.T, cfg *rest.Config, user string, rules ...rbacv1.PolicyRule) (kubernetes.Interface, func(...rbacv1.PolicyRule)) {
	t.Helper()
	admin := kubernetes.NewForConfigOrDie(cfg)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx(t), user, metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(ctx(t), user, metav1.DeleteOptions{})
	})
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	grant := func(more ...rbacv1.PolicyRule) {
		t.Helper()
		role, err := admin.RbacV1().ClusterRoles().Get(ctx(t), user, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		role.Rules = append(role.Rules, more...)
		if _, err := admin.RbacV1().ClusterRoles().Update(ctx(t), role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return kubernetes.NewForConfigOrDie(cfg), grant
}

func signerRule(verb string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"signers"}, Verbs: []string{verb}, ResourceNames: names}
}

// TestCertificateApprovalAndSigning: approving a request needs approve
// on its signer (or its domain's "/*"), issuing its certificate needs
// sign, beside the right to update the subresources.
func TestCertificateApprovalAndSigning(t *testing.T) {
	t.Parallel()
	name := testserver.NamespaceName(t)
	signer := "example.com/" + name
	admin := clientset(t)
	csr, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx(t), csrOf(t, name, signer), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.CertificatesV1().CertificateSigningRequests().Delete(ctx(t), name, metav1.DeleteOptions{})
	})
	cs, grant := impersonating(t, name, rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"},
		Resources: []string{"certificatesigningrequests/approval", "certificatesigningrequests/status"}, Verbs: []string{"update"}})
	csrs := cs.CertificatesV1().CertificateSigningRequests()
	forbidden := `certificatesigningrequests.certificates.k8s.io "` + name + `" is forbidden: `
	// The role reaches the authorizer's cache in a moment: until then
	// the refusal is authorization's.
	refusedWith := func(want string, call func() error) {
		t.Helper()
		eventually(t, func(int) error {
			err := call()
			if err == nil {
				t.Fatalf("allowed, want %s", want)
			}
			if got := statusOf(t, err); got.Code != 403 || got.Message != want {
				return err
			}
			return nil
		})
	}
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: "True", Reason: "Test"}}
	approve := func() error { _, err := csrs.UpdateApproval(ctx(t), name, csr, metav1.UpdateOptions{}); return err }
	refusedWith(forbidden+`user not permitted to approve requests with signerName "`+signer+`"`, approve)
	grant(signerRule("approve", "example.com/*"))
	eventually(t, func(int) error { return approve() })

	approved, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	approved.Status.Certificate = []byte(caPEM(t))
	sign := func() error { _, err := csrs.UpdateStatus(ctx(t), approved, metav1.UpdateOptions{}); return err }
	refusedWith(forbidden+`user not permitted to sign requests with signerName "`+signer+`"`, sign)
	grant(signerRule("sign", signer))
	eventually(t, func(int) error { return sign() })
}

// TestCertificateSubjectRestriction: the kube-apiserver-client signer
// may not be asked for system:masters.
func TestCertificateSubjectRestriction(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	name := testserver.NamespaceName(t)
	_, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx(t),
		csrOf(t, name, certificatesv1.KubeAPIServerClientSignerName, "system:masters"), metav1.CreateOptions{})
	want := `certificatesigningrequests.certificates.k8s.io "` + name + `" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`
	if got := statusOf(t, err); got.Code != 403 || got.Message != want {
		t.Errorf("system:masters: %v\nwant 403 %s", err, want)
	}
	for _, csr := range []*certificatesv1.CertificateSigningRequest{
		csrOf(t, name+"-a", certificatesv1.KubeAPIServerClientSignerName, "system:nodes"),
		csrOf(t, name+"-b", "example.com/signer", "system:masters"),
	} {
		if _, err := cs.CertificatesV1().CertificateSigningRequests().Create(ctx(t), csr, metav1.CreateOptions{}); err != nil {
			t.Errorf("%s for %s: %v", csr.Spec.SignerName, csr.Name, err)
		}
		t.Cleanup(func() {
			_ = cs.CertificatesV1().CertificateSigningRequests().Delete(ctx(t), csr.Name, metav1.DeleteOptions{})
		})
	}
}

// TestClusterTrustBundleAttest: a bundle naming a signer needs attest on
// it; one naming none does not.
func TestClusterTrustBundleAttest(t *testing.T) {
	t.Parallel()
	name := testserver.NamespaceName(t)
	signer := "example.com/" + name
	cs, grant := impersonating(t, name, rbacv1.PolicyRule{APIGroups: []string{"certificates.k8s.io"},
		Resources: []string{"clustertrustbundles"}, Verbs: []string{"create", "delete"}})
	bundles := cs.CertificatesV1().ClusterTrustBundles()
	bundle := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:" + name + ":a"},
		Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: caPEM(t)}}
	create := func(b *certificatesv1.ClusterTrustBundle) func() error {
		return func() error {
			_, err := bundles.Create(ctx(t), b, metav1.CreateOptions{})
			if err == nil {
				t.Cleanup(func() {
					_ = clientset(t).CertificatesV1().ClusterTrustBundles().Delete(ctx(t), b.Name, metav1.DeleteOptions{})
				})
			}
			return err
		}
	}
	want := `clustertrustbundles.certificates.k8s.io "` + bundle.Name + `" is forbidden: user not permitted to attest for signerName "` + signer + `"`
	eventually(t, func(int) error {
		err := create(bundle)()
		if err == nil {
			t.Fatal("created without attest")
		}
		if got := statusOf(t, err); got.Code != 403 || got.Message != want {
			return err
		}
		return nil
	})
	unsigned := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: caPEM(t)}}
	if err := create(unsigned)(); err != nil {
		t.Errorf("a bundle without a signer: %v", err)
	}
	grant(signerRule("attest", signer))
	eventually(t, func(int) error { return create(bundle)() })
}
