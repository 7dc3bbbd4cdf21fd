package startup

import (
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// kubeadmPKI is what kubeadm writes in /etc/kubernetes/pki, in dir.
type kubeadmPKI struct {
	dir                           string
	ca                            *x509.Certificate
	caKey                         *ecdsa.PrivateKey
	frontProxyCA                  *x509.Certificate
	frontProxyCAKey               *ecdsa.PrivateKey
	frontProxyCert, frontProxyKey []byte
}

func (p kubeadmPKI) path(name string) string { return filepath.Join(p.dir, name) }

// writeKubeadmPKI writes kubeadm's certificates and keys: the cluster CA
// and what it signs (the serving certificate, the kubelet client), the
// front proxy's CA and client, etcd's CA, its server and the API
// server's etcd client, and the service account key pair.
func writeKubeadmPKI(t *testing.T, dir string) kubeadmPKI {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "etcd"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := kubeadmPKI{dir: dir}
	p.ca, p.caKey = newCA(t, "kubernetes")
	writeFile(t, p.path("ca.crt"), certPEM(p.ca))
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	pair := func(ca *x509.Certificate, key *ecdsa.PrivateKey, name string, tmpl *x509.Certificate) ([]byte, []byte) {
		cert, k := issue(t, ca, key, tmpl)
		writeFile(t, p.path(name+".crt"), cert)
		writeFile(t, p.path(name+".key"), k)
		return cert, k
	}
	pair(p.ca, p.caKey, "apiserver", &x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"},
		DNSNames: []string{"kubernetes", "localhost"}, IPAddresses: loopback, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	pair(p.ca, p.caKey, "apiserver-kubelet-client", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"kubeadm:cluster-admins"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})

	p.frontProxyCA, p.frontProxyCAKey = newCA(t, "front-proxy-ca")
	writeFile(t, p.path("front-proxy-ca.crt"), certPEM(p.frontProxyCA))
	p.frontProxyCert, p.frontProxyKey = pair(p.frontProxyCA, p.frontProxyCAKey, "front-proxy-client",
		&x509.Certificate{Subject: pkix.Name{CommonName: "front-proxy-client"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})

	etcdCA, etcdCAKey := newCA(t, "etcd-ca")
	writeFile(t, p.path("etcd/ca.crt"), certPEM(etcdCA))
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	pair(etcdCA, etcdCAKey, "etcd/server", &x509.Certificate{Subject: pkix.Name{CommonName: "etcd"}, IPAddresses: loopback, ExtKeyUsage: both})
	pair(etcdCA, etcdCAKey, "apiserver-etcd-client", &x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver-etcd-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p.path("sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}))
	writeFile(t, p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	return p
}

// kubeadmAPIServerArgs is kube-apiserver's command line in the static pod
// manifest kubeadm v1.37 writes, with this test's paths and ports.
func kubeadmAPIServerArgs(p kubeadmPKI, etcdURL string, port int) []string {
	return []string{
		"--advertise-address=127.0.0.1",
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--client-ca-file=" + p.path("ca.crt"),
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--etcd-cafile=" + p.path("etcd/ca.crt"),
		"--etcd-certfile=" + p.path("apiserver-etcd-client.crt"),
		"--etcd-keyfile=" + p.path("apiserver-etcd-client.key"),
		"--etcd-servers=" + etcdURL,
		"--kubelet-client-certificate=" + p.path("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p.path("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--proxy-client-cert-file=" + p.path("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p.path("front-proxy-client.key"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-client-ca-file=" + p.path("front-proxy-ca.crt"),
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--secure-port=" + strconv.Itoa(port),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.path("sa.pub"),
		"--service-account-signing-key-file=" + p.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/12",
		"--tls-cert-file=" + p.path("apiserver.crt"),
		"--tls-private-key-file=" + p.path("apiserver.key"),
	}
}

// TestKubeadmCommandLine runs the binary with kubeadm's kube-apiserver
// command line, unchanged, over an etcd that takes only clients with a
// certificate of its own CA, as kubeadm's stacked etcd: it serves
// kubeadm's certificate, and each credential kubeadm's cluster uses
// authenticates as it does there: a client certificate of the cluster
// CA, the front proxy's headers, a bootstrap token, and a service account
// token it signs with sa.key.
func TestKubeadmCommandLine(t *testing.T) {
	p, base, apiserver := startKubeadm(t)
	adminCert, adminKey := issue(t, p.ca, p.caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	tlsConfig := rest.TLSClientConfig{CAData: certPEM(p.ca)}
	adminTLS := tlsConfig
	adminTLS.CertData, adminTLS.KeyData = adminCert, adminKey
	admin := kubernetes.NewForConfigOrDie(&rest.Config{Host: base, TLSClientConfig: adminTLS})
	whoami := func(t *testing.T, cfg *rest.Config) authenticationv1.UserInfo {
		t.Helper()
		r, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
			&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.UserInfo
	}

	t.Run("client certificate of the cluster CA", func(t *testing.T) {
		if u := whoami(t, &rest.Config{Host: base, TLSClientConfig: adminTLS}); u.Username != "kubernetes-admin" {
			t.Errorf("user %+v", u)
		}
	})
	t.Run("front proxy", func(t *testing.T) {
		proxyTLS := tlsConfig
		proxyTLS.CertData, proxyTLS.KeyData = p.frontProxyCert, p.frontProxyKey
		cfg := &rest.Config{Host: base, TLSClientConfig: proxyTLS, WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return transport.NewAuthProxyRoundTripper("jane", "", []string{"dev"}, map[string][]string{"team": {"a"}}, rt)
		}}
		if u := whoami(t, cfg); u.Username != "jane" || len(u.Groups) == 0 || u.Groups[0] != "dev" || u.Extra["team"][0] != "a" {
			t.Errorf("user %+v, want jane in dev, team a", u)
		}
	})
	t.Run("bootstrap token", func(t *testing.T) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
			Type: corev1.SecretTypeBootstrapToken, StringData: map[string]string{
				"token-id": "abcdef", "token-secret": "0123456789abcdef", "usage-bootstrap-authentication": "true"}}
		if _, err := admin.CoreV1().Secrets("kube-system").Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if u := whoami(t, &rest.Config{Host: base, TLSClientConfig: tlsConfig, BearerToken: "abcdef.0123456789abcdef"}); u.Username != "system:bootstrap:abcdef" {
			t.Errorf("user %+v", u)
		}
	})
	t.Run("service account token signed with sa.key", func(t *testing.T) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}
		if _, err := admin.CoreV1().ServiceAccounts("default").Create(context.Background(), sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		tok, err := admin.CoreV1().ServiceAccounts("default").CreateToken(context.Background(), "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if u := whoami(t, &rest.Config{Host: base, TLSClientConfig: tlsConfig, BearerToken: tok.Status.Token}); u.Username != "system:serviceaccount:default:robot" {
			t.Errorf("user %+v", u)
		}
	})
	t.Run("the Node authorizer", func(t *testing.T) {
		nodeCert, nodeKey := issue(t, p.ca, p.caKey, &x509.Certificate{
			Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		nodeTLS := tlsConfig
		nodeTLS.CertData, nodeTLS.KeyData = nodeCert, nodeKey
		node := kubernetes.NewForConfigOrDie(&rest.Config{Host: base, TLSClientConfig: nodeTLS})
		if _, err := node.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("a node listing secrets: %v, want Forbidden", err)
		}
	})
	if err := apiserver.stop(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

// startKubeadm starts the binary with kubeadm's command line and its
// PKI, over a TLS etcd, and waits until it is ready.
func startKubeadm(t *testing.T) (p kubeadmPKI, base string, apiserver *process) {
	bin := build(t)
	dir := t.TempDir()
	p = writeKubeadmPKI(t, filepath.Join(dir, "pki"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	etcd, err := embedetcd.Start(ctx, embedetcd.Config{Dir: filepath.Join(dir, "etcd"), UnsafeNoFsync: true, LogLevel: "fatal",
		ClientTLS: &embedetcd.TLSFiles{CAFile: p.path("etcd/ca.crt"), CertFile: p.path("etcd/server.crt"), KeyFile: p.path("etcd/server.key")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	port := freePort(t)
	apiserver = startIn(t, dir, bin, kubeadmAPIServerArgs(p, etcd.ClientURL(), port)...)
	base = "https://127.0.0.1:" + strconv.Itoa(port)
	roots := x509.NewCertPool()
	roots.AddCert(p.ca)
	waitOK(t, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}, base+"/readyz", apiserver)
	return p, base, apiserver
}

// TestKwokCommandLine runs the binary with kwokctl v0.8's kube-apiserver
// command line (secure, with authorization, admission off, no request
// limits, its admin certificate as serving certificate and service
// account key): it serves, the admin is system:masters, and admission is
// off as kwok asks (a pod gets no service account).
func TestKwokCommandLine(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	etcd, err := embedetcd.Start(ctx, embedetcd.Config{Dir: filepath.Join(dir, "etcd"), UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(etcd.Stop)
	ca, caKey := newCA(t, "kwok-ca")
	adminCert, adminKey := issue(t, ca, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	caPath, certPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")
	writeFile(t, caPath, certPEM(ca))
	writeFile(t, certPath, adminCert)
	writeFile(t, keyPath, adminKey)
	port := freePort(t)
	apiserver := startIn(t, dir, bin,
		"--etcd-prefix=/registry", "--allow-privileged=true", "--admission-control=", "--runtime-config=api/legacy=false,api/all=false,v1=true,apps/v1=true",
		"--feature-gates=", "--max-requests-inflight=0", "--max-mutating-requests-inflight=0", "--enable-priority-and-fairness=false",
		"--etcd-servers="+etcd.ClientURL(), "--authorization-mode=Node,RBAC", "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+certPath, "--tls-private-key-file="+keyPath, "--client-ca-file="+caPath,
		"--service-account-key-file="+keyPath, "--service-account-signing-key-file="+keyPath,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--proxy-client-key-file="+keyPath, "--proxy-client-cert-file="+certPath, "--v=4")
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	waitOK(t, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}, base+"/readyz", apiserver)

	admin := kubernetes.NewForConfigOrDie(&rest.Config{Host: base, TLSClientConfig: rest.TLSClientConfig{CAData: certPEM(ca), CertData: adminCert, KeyData: adminKey}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	got, err := admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "" {
		t.Errorf("service account %q: admission runs despite --admission-control=", got.Spec.ServiceAccountName)
	}
	groups, err := admin.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups.Groups {
		names = append(names, g.Name)
	}
	if len(names) != 2 || names[0] != "" || names[1] != "apps" {
		t.Errorf("groups served %q, want the core group and apps (--runtime-config)", names)
	}
	if err := apiserver.stop(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

// TestVersionFlag: kube's --version prints kube's line (with the version
// /version reports) and exits before anything starts; --version=raw
// prints the whole version.
func TestVersionFlag(t *testing.T) {
	bin := build(t)
	for arg, want := range map[string]string{"--version": "Kubernetes v1.37.2", "--version=raw": "version.Info{"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("%s printed %q, want %q...", arg, out, want)
		}
	}
}
