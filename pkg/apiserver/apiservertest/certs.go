// Package apiservertest holds what the tests of pkg/apiserver's packages
// share: certificates for their TLS servers and clients, made on the fly
// (P-256 keys, valid from an hour ago to an hour from now), so that no
// test keeps keys in testdata and each states only what its certificate
// is for.
//
// Layers: imported by tests of pkg/apiserver/... only; it imports nothing
// of this project.
package apiservertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is Cert PEM-encoded (a caBundle, a --client-ca-file).
	PEM []byte
}

// NewCA returns a self-signed CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	ca := &CA{}
	ca.Cert, ca.Key = Sign(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}, nil)
	ca.PEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
	return ca
}

// Issue returns a certificate for cn: a serving one for dnsNames when
// given, else a client one.
func (ca *CA) Issue(t testing.TB, cn string, dnsNames ...string) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if len(dnsNames) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	cert, key := Sign(t, tmpl, ca)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// Client returns a client certificate of the user cn in groups (the
// subject's organizations), as x509 authentication reads them.
func (ca *CA) Client(t testing.TB, cn string, groups ...string) *x509.Certificate {
	t.Helper()
	cert, _ := Sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca)
	return cert
}

// Pool is a pool of the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Sign issues tmpl, with a new key, a serial number of its own and the
// test validity, signed by ca (self-signed when ca is nil).
func Sign(t testing.TB, tmpl *x509.Certificate, ca *CA) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// Random serial numbers: certificates of one test never share one.
	tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	parent, parentKey := tmpl, key
	if ca != nil {
		parent, parentKey = ca.Cert, ca.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// Localhost is a self-signed serving certificate for 127.0.0.1.
func Localhost(t testing.TB) tls.Certificate {
	t.Helper()
	cert, key := Sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}, nil)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// PEM returns cert and key PEM-encoded (a kubeconfig's client-certificate
// and client-key).
func PEM(t testing.TB, cert *x509.Certificate, key *ecdsa.PrivateKey) (certPEM, keyPEM []byte) {
	t.Helper()
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
