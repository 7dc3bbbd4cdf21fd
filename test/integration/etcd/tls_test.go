package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// rangeBody asks etcd's JSON gateway for every key under /registry (base64
// of "/registry" to "/registrz"): a Secret's among them.
const rangeBody = `{"key":"L3JlZ2lzdHJ5","range_end":"L3JlZ2lzdHJ6"}`

// TestEmbeddedEtcdTakesOnlyItsClients: the embedded etcd's loopback ports
// are open to every local user, so they take TLS clients with a
// certificate of the embedded etcd's CA only, kept in --data-dir/pki
// readable by the server's user only; the server itself, and an
// operator's client given those files, get in.
func TestEmbeddedEtcdTakesOnlyItsClients(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t)
	files := srv.Server.EtcdTLSFiles
	u, err := url.Parse(srv.Server.EtcdURL)
	if err != nil || u.Scheme != "https" {
		t.Fatalf("EtcdURL = %q, want an https URL", srv.Server.EtcdURL)
	}
	for _, f := range []string{files.KeyFile, filepath.Join(filepath.Dir(files.CAFile), "etcd-ca.key")} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want mode 0600", f, err, st.Mode().Perm())
		}
	}
	caPEM, err := os.ReadFile(files.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	other := newPKI(t, t.TempDir())
	otherCert, err := tls.LoadX509KeyPair(other.CertFile, other.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	clientPort, peerPort := ports(t, filepath.Join(srv.Options.DataDir, "etcd"))
	refused := []struct {
		name string
		url  string
		tls  *tls.Config
	}{
		{"plain HTTP to the client port", "http://" + net.JoinHostPort("127.0.0.1", clientPort) + "/v3/kv/range", nil},
		{"TLS without a client certificate", "https://" + net.JoinHostPort("127.0.0.1", clientPort) + "/v3/kv/range", &tls.Config{RootCAs: roots}},
		{"TLS with a certificate of another CA", "https://" + net.JoinHostPort("127.0.0.1", clientPort) + "/v3/kv/range",
			&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{otherCert}}},
		{"plain HTTP to the peer port", "http://" + net.JoinHostPort("127.0.0.1", peerPort) + "/members", nil},
		{"TLS without a client certificate to the peer port", "https://" + net.JoinHostPort("127.0.0.1", peerPort) + "/members", &tls.Config{RootCAs: roots}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			status, body, err := post(tc.url, tc.tls)
			if err == nil && (status == http.StatusOK || strings.Contains(body, "kvs")) {
				t.Fatalf("%s answered %d %q, want it refused", tc.url, status, body)
			}
		})
	}
	t.Run("its own certificate", func(t *testing.T) {
		if n := keys(t, etcdClient(t, srv.Server.EtcdURL, files), "/registry/namespaces/"); n == 0 {
			t.Fatal("no namespace in etcd")
		}
	})
	t.Run("the server works", func(t *testing.T) {
		cms := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().ConfigMaps(srv.CreateNamespace(t))
		if _, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

// post POSTs rangeBody to url over tlsConfig (nil: plain HTTP).
func post(url string, tlsConfig *tls.Config) (int, string, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	defer c.CloseIdleConnections()
	resp, err := c.Post(url, "application/json", strings.NewReader(rangeBody))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// ports are the client and peer ports the embedded etcd of dir listens
// on (remembered in dir/ports).
func ports(t *testing.T, dir string) (client, peer string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "ports"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(string(data), &client, &peer); err != nil {
		t.Fatalf("%s: %v", filepath.Join(dir, "ports"), err)
	}
	return client, peer
}
