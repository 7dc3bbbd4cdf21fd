package aggregator

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pki is what the aggregation layer's two sides are given to trust each
// other, as kubeadm generates it, in files under dir:
//
//	front-proxy-ca.crt                    the CA that signs the proxy's client certificate
//	                                      (--requestheader-client-ca-file)
//	front-proxy-client.crt, .key          that certificate, CN front-proxy-client
//	                                      (--proxy-client-cert-file, --proxy-client-key-file)
//	wardle-ca.crt                         the CA of the extension server's serving
//	                                      certificate (the APIService's caBundle)
//	wardle.crt, wardle.key                that certificate, for api.wardle.svc
type pki struct{ dir string }

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

func newPKI(t *testing.T, dir string) pki {
	t.Helper()
	p := pki{dir: dir}
	ca, caKey := writeCert(t, p.path("front-proxy-ca"), &x509.Certificate{
		Subject: pkix.Name{CommonName: "front-proxy-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	writeCert(t, p.path("front-proxy-client"), &x509.Certificate{
		Subject:     pkix.Name{CommonName: "front-proxy-client"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	wardleCA, wardleKey := writeCert(t, p.path("wardle-ca"), &x509.Certificate{
		Subject: pkix.Name{CommonName: "wardle-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	// The aggregator asks for SERVICE.NAMESPACE.svc whatever address it
	// dials: the certificate names the service, not the loopback address.
	writeCert(t, p.path("wardle"), &x509.Certificate{
		Subject:     pkix.Name{CommonName: "api.wardle.svc"},
		DNSNames:    []string{"api.wardle.svc", "localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, wardleCA, wardleKey)
	return p
}

// writeCert signs tmpl with parent (itself when nil) and writes
// base.crt and base.key.
func writeCert(t *testing.T, base string, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	keyDER, _ := x509.MarshalECPrivateKey(key)
	if err := os.WriteFile(base+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
