package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestClientCertificates: a certificate signed by the client CA is its
// common name, in its organizations and system:authenticated, with the
// certificate's fingerprint as credential ID.
func TestClientCertificates(t *testing.T) {
	t.Parallel()
	u, err := whoami(t, srv.ClientConfigFor(t, "jane", "dev", "qa"))
	if err != nil {
		t.Fatal(err)
	}
	// (Go writes the organizations as one RDN, a DER SET: sorted.)
	groups := slices.Sorted(slices.Values(u.Groups))
	if u.Username != "jane" || !slices.Equal(groups, []string{"dev", "qa", "system:authenticated"}) {
		t.Errorf("got %+v", u)
	}
	if id := u.Extra["authentication.kubernetes.io/credential-id"]; len(id) != 1 || !strings.HasPrefix(id[0], "X509SHA256=") {
		t.Errorf("credential id: %v", id)
	}
}

// TestForeignCertificate: a certificate of another CA is refused (401),
// never taken for anonymous.
func TestForeignCertificate(t *testing.T) {
	t.Parallel()
	cfg := rest.AnonymousClientConfig(srv.ClientConfig)
	cfg.CertData, cfg.KeyData = selfSignedClientCert(t, "mallory", "system:masters")
	if _, err := whoami(t, cfg); !apierrors.IsUnauthorized(err) {
		t.Errorf("a certificate of another CA: got %v, want 401", err)
	}
}

// TestAnonymous: no credentials is system:anonymous; a bad token is 401.
func TestAnonymous(t *testing.T) {
	t.Parallel()
	u, err := whoami(t, srv.AnonymousClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "system:anonymous" || !slices.Equal(u.Groups, []string{"system:unauthenticated"}) {
		t.Errorf("got %+v", u)
	}
	cfg := srv.AnonymousClientConfig()
	cfg.BearerToken = "not-a-token"
	if _, err := whoami(t, cfg); !apierrors.IsUnauthorized(err) || err.Error() != "Unauthorized" {
		t.Errorf("a token nobody knows: got %v, want 401 Unauthorized", err)
	}
}

// TestAnonymousOff: with --anonymous-auth=false, no credentials is 401,
// even on /healthz, as kube's.
func TestAnonymousOff(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) { o.Auth.AnonymousAuth = false })
	if _, err := whoami(t, ts.AnonymousClientConfig()); !apierrors.IsUnauthorized(err) {
		t.Errorf("no credentials: got %v, want 401", err)
	}
	client, err := rest.HTTPClientFor(ts.AnonymousClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("/healthz without credentials: %d, want 401", resp.StatusCode)
	}
	if u, err := whoami(t, ts.ClientConfigFor(t, "jane")); err != nil || u.Username != "jane" {
		t.Errorf("a certificate still works: %+v %v", u, err)
	}
}

// TestTokenFile: --token-auth-file users, in their groups.
func TestTokenFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(file, []byte("# comment\ntok-bob,bob,uid-bob,\"ops,dev\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.TokenAuthFile = file })
	cfg := ts.AnonymousClientConfig()
	cfg.BearerToken = "tok-bob"
	u, err := whoami(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "bob" || u.UID != "uid-bob" || !slices.Equal(u.Groups, []string{"ops", "dev", "system:authenticated"}) {
		t.Errorf("got %+v", u)
	}
	// Without a generated token the kubeconfig holds the certificate only.
	data, err := os.ReadFile(ts.Server.KubeconfigPath)
	if err != nil || !strings.Contains(string(data), "client-certificate-data") || strings.Contains(string(data), "token:") {
		t.Errorf("kubeconfig: %v\n%s", err, data)
	}
}

// TestGeneratedKubeconfig: the kubeconfig of the default run is the
// admin by a client certificate (kubernetes-admin in system:masters),
// and by token in its second context.
func TestGeneratedKubeconfig(t *testing.T) {
	t.Parallel()
	needKubectl(t)
	path := srv.Server.KubeconfigPath
	out, err := kubectl(t, path, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if err != nil || out != `kubernetes-admin ["system:masters","system:authenticated"]` {
		t.Errorf("kubectl auth whoami: %v %s", err, out)
	}
	out, err = kubectl(t, path, "--context", "miniapiserver-token", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if err != nil || out != "admin" {
		t.Errorf("kubectl auth whoami with the token: %v %s", err, out)
	}
	out, err = kubectl(t, kubeconfigFor(t, srv.ClientConfigFor(t, "jane", "dev")), "auth", "whoami")
	if err != nil || !strings.Contains(out, "jane") || !strings.Contains(out, "[dev system:authenticated]") {
		t.Errorf("kubectl auth whoami as jane: %v\n%s", err, out)
	}
}

// TestExtensionAuthConfigMap: kube-system/extension-apiserver-authentication
// holds the client CA, for delegated authentication.
func TestExtensionAuthConfigMap(t *testing.T) {
	t.Parallel()
	cm, err := clientset(t).CoreV1().ConfigMaps("kube-system").Get(ctx, "extension-apiserver-authentication", getOptions)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["client-ca-file"] != string(srv.Server.ClientCA.PEM) {
		t.Errorf("client-ca-file: %q", cm.Data["client-ca-file"])
	}
}

// selfSignedClientCert is a client certificate that is its own CA.
func selfSignedClientCert(t *testing.T, cn string, groups ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
