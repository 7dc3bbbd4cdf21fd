package app

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The admin of the generated kubeconfig, as kubeadm names it.
const (
	AdminUserName  = "kubernetes-admin"
	AdminUserGroup = "system:masters"
)

// ClientCA is the authority of client certificates: the bundle that
// verifies them and, when the server generated it, the key that signs
// new ones. The embedded etcd cluster's CA is one too (etcdpki.go).
type ClientCA struct {
	// PEM is the bundle (kube's client-ca-file).
	PEM  []byte
	Pool *x509.CertPool
	cert *x509.Certificate
	key  crypto.Signer // nil with --client-ca-file
}

// loadClientCA returns --client-ca-file's bundle, or the CA generated in
// dataDir (made the first time, again when it is about to expire).
func loadClientCA(o *Options) (*ClientCA, error) {
	if o.Auth.ClientCAFile != "" {
		data, err := os.ReadFile(o.Auth.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("--client-ca-file: %s holds no PEM certificate", o.Auth.ClientCAFile)
		}
		return &ClientCA{PEM: data, Pool: pool}, nil
	}
	dir := filepath.Join(o.DataDir, "pki")
	certFile, keyFile := filepath.Join(dir, "client-ca.crt"), filepath.Join(dir, "client-ca.key")
	if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		if cert, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && time.Until(cert.NotAfter) > 30*24*time.Hour {
			return newClientCA(cert, pair.PrivateKey.(crypto.Signer))
		}
	}
	ca, err := createCA("miniapiserver-client-ca", certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: writing the client CA: %w", err)
	}
	return ca, nil
}

// createCA makes a CA named commonName, valid for ten years, and writes
// it to certFile and keyFile (readable by the owner only).
func createCA(commonName, certFile, keyFile string) (*ClientCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: commonName},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	certPEM, keyPEM, err := createCert(tmpl, nil, key, 10*365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	if err := writePair(filepath.Dir(certFile), certFile, keyFile, certPEM, keyPEM); err != nil {
		return nil, err
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	return newClientCA(cert, key)
}

func newClientCA(cert *x509.Certificate, key crypto.Signer) (*ClientCA, error) {
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &ClientCA{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), Pool: pool, cert: cert, key: key}, nil
}

// CanSign reports whether the server holds the CA's key.
func (ca *ClientCA) CanSign() bool { return ca.key != nil }

// Sign issues a client certificate (PEM, with its ECDSA key) for user
// name in groups, valid for validity.
func (ca *ClientCA) Sign(name string, groups []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if ca.key == nil {
		return nil, nil, errors.New("the client CA was given by --client-ca-file: the server cannot sign with it")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	return createCert(tmpl, ca, key, validity)
}

// adminCert returns the admin's client certificate kept in dataDir, made
// again when the CA changed or it is about to expire.
func adminCert(dataDir string, ca *ClientCA) (certPEM, keyPEM []byte, err error) {
	dir := filepath.Join(dataDir, "pki")
	certFile, keyFile := filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	if pair, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		cert, err := x509.ParseCertificate(pair.Certificate[0])
		if err == nil && cert.CheckSignatureFrom(ca.cert) == nil && time.Until(cert.NotAfter) > 30*24*time.Hour &&
			cert.Subject.CommonName == AdminUserName && slices.Equal(cert.Subject.Organization, []string{AdminUserGroup}) {
			certPEM, err1 := os.ReadFile(certFile)
			keyPEM, err2 := os.ReadFile(keyFile)
			if err := errors.Join(err1, err2); err != nil {
				return nil, nil, err
			}
			return certPEM, keyPEM, nil
		}
	}
	certPEM, keyPEM, err = ca.Sign(AdminUserName, []string{AdminUserGroup}, 365*24*time.Hour)
	if err != nil {
		return nil, nil, err
	}
	if err := writePair(dir, certFile, keyFile, certPEM, keyPEM); err != nil {
		return nil, nil, fmt.Errorf("--data-dir: writing the admin certificate: %w", err)
	}
	return certPEM, keyPEM, nil
}

// createCert signs tmpl with the CA (itself when ca is nil), for key,
// valid from an hour ago for validity.
func createCert(tmpl *x509.Certificate, ca *ClientCA, key *ecdsa.PrivateKey, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial, now.Add(-time.Hour), now.Add(validity)
	parent, signer := tmpl, crypto.Signer(key)
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// writePair writes a certificate and its key (readable by the owner only).
func writePair(dir, certFile, keyFile string, certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(certFile, certPEM, 0o644)
}
