package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is what the cluster's parts are given to trust each other, generated
// by the test as kubeadm would, in files under dir:
//
//	ca.crt, ca.key                 the CA of the API server's serving certificate
//	apiserver.crt, apiserver.key   that certificate, for 127.0.0.1 and localhost
//	signing-ca.crt, signing-ca.key the controller-manager's CSR signing CA
//	                               (also the API server's --client-ca-file)
//	sa.key, sa.pub                 the service-account key pair
//	tokens.csv                     the admin's static token (system:masters)
//	kubeconfig                     the admin's kubeconfig, for the test's clients
//	kube-controller-manager.{crt,key,conf}, kube-scheduler.{crt,key,conf}
//	                               each component's client certificate
//	                               (system:kube-controller-manager,
//	                               system:kube-scheduler: kubeadm's users,
//	                               authorized by kube's bootstrap roles) and
//	                               kubeconfig
type pki struct {
	dir   string
	token string
	// signingCA verifies what the CSR signer signs.
	signingCA *x509.Certificate
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// newPKI generates every file in dir.
func newPKI(dir string) (*pki, error) {
	p := &pki{dir: dir, token: randomHex(16)}
	caCert, caKey, err := writeCA(p.path("ca"), "e2e-serving-ca")
	if err != nil {
		return nil, err
	}
	if err := writeServingCert(p.path("apiserver"), caCert, caKey); err != nil {
		return nil, err
	}
	signingCA, signingKey, err := writeCA(p.path("signing-ca"), "e2e-signing-ca")
	if err != nil {
		return nil, err
	}
	p.signingCA = signingCA
	for _, c := range componentUsers {
		if err := writeClientCert(p.path(c.component), c.user, signingCA, signingKey); err != nil {
			return nil, err
		}
	}
	if err := writeServiceAccountKeys(p.path("sa")); err != nil {
		return nil, err
	}
	tokens := fmt.Sprintf("%s,e2e-admin,e2e-admin,system:masters\n", p.token)
	return p, os.WriteFile(p.path("tokens.csv"), []byte(tokens), 0o600)
}

// writeServiceAccountKeys writes a service-account key pair as base.key
// and base.pub.
func writeServiceAccountKeys(base string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writePEM(base+".key", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return err
	}
	return writePEM(base+".pub", "PUBLIC KEY", pub)
}

// componentUsers are the users the components authenticate as, with
// client certificates as kubeadm gives them (no groups): kube's bootstrap
// policy binds their roles to these names.
var componentUsers = []struct{ component, user string }{
	{"kube-controller-manager", "system:kube-controller-manager"},
	{"kube-scheduler", "system:kube-scheduler"},
}

// writeKubeconfigs writes the admin's kubeconfig and each component's
// (component.conf, its client certificate) for the server at url.
func (p *pki) writeKubeconfigs(url string) error {
	for _, c := range componentUsers {
		config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %s}
current-context: e2e
`, url, p.path("ca.crt"), c.user, p.path(c.component+".crt"), p.path(c.component+".key"), c.user)
		if err := os.WriteFile(p.path(c.component+".conf"), []byte(config), 0o600); err != nil {
			return err
		}
	}
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: e2e-admin
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin}
current-context: e2e
`, url, p.path("ca.crt"), p.token)
	return os.WriteFile(p.path("kubeconfig"), []byte(config), 0o600)
}

// writeCA writes a self-signed CA as base.crt and base.key.
func writeCA(base, name string) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, writeCertAndKey(base, der, key)
}

// writeServingCert writes a serving certificate for loopback signed by ca.
func writeServingCert(base string, ca *x509.Certificate, caKey crypto.Signer) error {
	return writeLeaf(base, &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
	}, ca, caKey)
}

// writeClientCert writes a client certificate of user (no groups)
// signed by ca.
func writeClientCert(base, user string, ca *x509.Certificate, caKey crypto.Signer) error {
	return writeLeaf(base, &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: user},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
}

// writeLeaf writes the certificate tmpl, for a new key, signed by ca.
func writeLeaf(base string, tmpl, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	return writeCertAndKey(base, der, key)
}

func writeCertAndKey(base string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(base+".key", "EC PRIVATE KEY", keyDER); err != nil {
		return err
	}
	return writePEM(base+".crt", "CERTIFICATE", der)
}

func writePEM(file, kind string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b)
}
