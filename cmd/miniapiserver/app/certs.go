package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// servingCert returns the TLS certificate to serve with: the one given by
// flags, or a self-signed one kept in dataDir (generated the first time,
// and again when it does not cover the bind address or is about to
// expire). caPEM is the certificate clients should trust, when known.
func servingCert(o *Options) (cert tls.Certificate, caPEM []byte, err error) {
	if o.TLSCertFile != "" {
		cert, err = tls.LoadX509KeyPair(o.TLSCertFile, o.TLSPrivateKeyFile)
		if err != nil {
			return tls.Certificate{}, nil, fmt.Errorf("--tls-cert-file: %w", err)
		}
		return cert, nil, nil
	}
	dir := filepath.Join(o.DataDir, "pki")
	if o.CertDir != "" {
		dir = o.CertDir
	}
	certFile, keyFile := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	hosts := certHosts(o.BindAddress)
	// As kube's, a pair in --cert-dir is served as it is (envtest puts
	// one signed by its own CA there); the one generated in the data dir
	// is made again when it no longer fits.
	if cert, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil && (o.CertDir != "" || covers(cert, hosts)) {
		pemData, err := os.ReadFile(certFile)
		return cert, pemData, err
	}
	certPEM, keyPEM, err := selfSignedCert(hosts)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, nil, err
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, nil, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err = tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

// certHosts are the names a self-signed certificate covers: the bind
// address (and this host's name when bound to every interface), and
// loopback under every name.
func certHosts(bind string) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if ip := net.ParseIP(bind); ip != nil && ip.IsUnspecified() {
		if name, err := os.Hostname(); err == nil {
			hosts = append(hosts, name)
		}
	} else if !slices.Contains(hosts, bind) {
		hosts = append(hosts, bind)
	}
	return hosts
}

func covers(cert tls.Certificate, hosts []string) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 30*24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if leaf.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// selfSignedCert makes a one-year certificate that is its own CA, so a
// kubeconfig can trust exactly it.
func selfSignedCert(hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "miniapiserver"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return createCert(tmpl, nil, key, 365*24*time.Hour)
}
