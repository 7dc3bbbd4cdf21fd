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
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// embeddedEtcdTLS returns the TLS files of this server's embedded etcd:
// a CA (generated in --data-dir/pki by a server alone or the one that
// initializes a cluster, copied to the other members of a cluster) and a
// member certificate signed by it, kept in --data-dir/pki and made again
// when it does not cover the member's URLs, was signed by another CA or
// is about to expire. The one certificate serves the loopback client URL
// (and a cluster member's peer and client URLs), and is the client
// certificate the server (and the etcd and snapshot commands, and an
// operator's etcdctl) connects with: only whoever can read --data-dir/pki
// reaches etcd.
func embeddedEtcdTLS(o *Options) (embedetcd.TLSFiles, error) {
	eo := &o.EmbeddedEtcd
	caFile, caKeyFile := eo.caFiles(o.DataDir)
	ca, err := loadEtcdCA(caFile, caKeyFile)
	if errors.Is(err, fs.ErrNotExist) && eo.Join == "" && eo.CAFile == "" && eo.CAKeyFile == "" {
		ca, err = createEtcdCA(caFile, caKeyFile)
	}
	if err != nil {
		return embedetcd.TLSFiles{}, err
	}
	dir := filepath.Join(o.DataDir, "pki")
	files := embedetcd.TLSFiles{CertFile: filepath.Join(dir, "etcd-member.crt"), KeyFile: filepath.Join(dir, "etcd-member.key"), CAFile: caFile}
	hosts := []string{"localhost", "127.0.0.1"}
	if eo.enabled() {
		hosts = append(hosts, hostOf(eo.PeerURL), hostOf(eo.clientURL()))
	}
	if pair, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile); err == nil && covers(pair, hosts) {
		if leaf, err := x509.ParseCertificate(pair.Certificate[0]); err == nil && leaf.CheckSignatureFrom(ca.cert) == nil {
			return files, nil
		}
	}
	if !ca.CanSign() {
		return embedetcd.TLSFiles{}, fmt.Errorf("--embedded-etcd-ca-key-file: %s is missing: it is needed to sign this member's certificate", caKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return embedetcd.TLSFiles{}, err
	}
	name := eo.Name
	if !eo.enabled() || name == "" {
		name = "miniapiserver"
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	certPEM, keyPEM, err := createCert(tmpl, ca, key, 365*24*time.Hour)
	if err != nil {
		return embedetcd.TLSFiles{}, err
	}
	if err := writePair(dir, files.CertFile, files.KeyFile, certPEM, keyPEM); err != nil {
		return embedetcd.TLSFiles{}, fmt.Errorf("--data-dir: writing the etcd member certificate: %w", err)
	}
	return files, nil
}

func hostOf(u string) string {
	p, _ := url.Parse(u)
	return p.Hostname()
}

// loadEtcdCA loads the cluster's CA; its key may be missing (a member
// whose certificate is made already does not need it).
func loadEtcdCA(certFile, keyFile string) (*ClientCA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("--embedded-etcd-ca-file: %w (copy etcd-ca.crt and etcd-ca.key from the pki dir of the server that initialized the cluster)", err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, fmt.Errorf("--embedded-etcd-ca-file: %s holds no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("--embedded-etcd-ca-file: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return newClientCA(cert, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("--embedded-etcd-ca-key-file: %w", err)
	}
	return newClientCA(cert, pair.PrivateKey.(crypto.Signer))
}

// createEtcdCA makes the cluster's CA.
func createEtcdCA(certFile, keyFile string) (*ClientCA, error) {
	ca, err := createCA("miniapiserver-etcd-ca", certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: writing the etcd CA: %w", err)
	}
	return ca, nil
}
