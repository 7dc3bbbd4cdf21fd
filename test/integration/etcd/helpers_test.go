// Package etcd checks how the server reaches etcd: the embedded etcd
// takes TLS clients with its certificate only; an external etcd over TLS
// with kube's --etcd-cafile, --etcd-certfile and --etcd-keyfile, failing
// over between its members; resources moved to another etcd by
// --etcd-servers-overrides; and the timeouts of the etcd checks.
package etcd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// pki is a CA and a certificate it signed, valid for 127.0.0.1 as a
// server and as a client, in PEM files.
type pki struct{ embedetcd.TLSFiles }

// newPKI writes a new CA and certificate to dir.
func newPKI(t *testing.T, dir string) pki {
	t.Helper()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-etcd-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test-etcd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := pki{embedetcd.TLSFiles{CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "etcd.crt"), KeyFile: filepath.Join(dir, "etcd.key")}}
	write(t, p.CAFile, "CERTIFICATE", caDER)
	write(t, p.CertFile, "CERTIFICATE", der)
	write(t, p.KeyFile, "EC PRIVATE KEY", keyDER)
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func write(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startTLSEtcd starts an etcd of the test that takes TLS clients with a
// certificate of p's CA only.
func startTLSEtcd(t *testing.T, p pki) *embedetcd.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files := p.TLSFiles
	s, err := embedetcd.Start(ctx, embedetcd.Config{Dir: t.TempDir(), UnsafeNoFsync: true, LogLevel: "fatal", ClientTLS: &files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// etcdClient connects to the etcd at url with p's certificate.
func etcdClient(t *testing.T, url string, files embedetcd.TLSFiles) *clientv3.Client {
	t.Helper()
	tlsConfig, err := files.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// keys counts the keys under prefix.
func keys(t *testing.T, c *clientv3.Client, prefix string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("etcd get %s: %v", prefix, err)
	}
	return resp.Count
}

// get GETs path of srv as its administrator.
func get(t *testing.T, srv *testserver.TestServer, path string) (int, string) {
	t.Helper()
	resp, err := srv.HTTPClient(t).Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// closedURL is an https URL of a loopback port nothing listens on: an
// etcd member that is down.
func closedURL(t *testing.T) string {
	t.Helper()
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
