package imagepolicy

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apiservertest"
)

// backend is an image policy backend of the test's own over HTTPS, which
// asks for the plugin's client certificate and answers each call with
// answer (its number from 1, the request's body).
type backend struct {
	srv    *httptest.Server
	answer func(call int, body []byte) (int, string)

	mu     sync.Mutex
	bodies [][]byte
	users  []string // the client certificates' common names
}

const clientName = "imagepolicy-client"

func startBackend(t *testing.T, answer func(call int, body []byte) (int, string)) *backend {
	t.Helper()
	b := &backend{answer: answer}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(b.serve))
	certPEM, _ := clientCert(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	b.srv.TLS = &tls.Config{ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	b.srv.StartTLS()
	t.Cleanup(b.srv.Close)
	return b
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.bodies = append(b.bodies, body)
	b.users = append(b.users, r.TLS.PeerCertificates[0].Subject.CommonName)
	n := len(b.bodies)
	b.mu.Unlock()
	code, answer := b.answer(n, body)
	if strings.HasPrefix(answer, "{") {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, answer)
}

func (b *backend) calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.bodies)
}

// kubeconfig writes a kubeconfig naming the backend at path (with its
// CA and the client's certificate, files beside it) and returns its
// name.
func (b *backend) kubeconfig(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	ca := b.srv.Certificate()
	write(t, filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
	certPEM, keyPEM := clientCert(t)
	write(t, filepath.Join(dir, "client.crt"), certPEM)
	write(t, filepath.Join(dir, "client.key"), keyPEM)
	file := filepath.Join(dir, "kubeconfig")
	write(t, file, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: policy
  cluster:
    server: %s%s
    certificate-authority: ca.crt
users:
- name: apiserver
  user:
    client-certificate: client.crt
    client-key: client.key
contexts:
- name: default
  context: {cluster: policy, user: apiserver}
current-context: default
`, b.srv.URL, path)))
	return file
}

func write(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

var (
	clientOnce          sync.Once
	clientCertPEM, cKey []byte
)

// clientCert is a self-signed client certificate (its own CA), made once.
func clientCert(t *testing.T) ([]byte, []byte) {
	clientOnce.Do(func() {
		cert, key := apiservertest.Sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: clientName}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, nil)
		clientCertPEM, cKey = apiservertest.PEM(t, cert, key)
	})
	return clientCertPEM, cKey
}
