package startup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// envtestAPIServerArgs are the flags controller-runtime v0.25's envtest
// gives kube-apiserver (pkg/internal/testing/controlplane: its defaults,
// CertAuthn's --client-ca-file, and --insecure-port=0 because the help
// lists it).
func envtestAPIServerArgs(certDir, etcdURL string, port int) []string {
	return []string{
		"--advertise-address=127.0.0.1",
		"--allow-privileged=true",
		"--authorization-mode=RBAC",
		"--bind-address=127.0.0.1",
		"--cert-dir=" + certDir,
		"--client-ca-file=" + filepath.Join(certDir, "client-cert-auth-ca.crt"),
		"--disable-admission-plugins=ServiceAccount",
		"--etcd-servers=" + etcdURL,
		"--insecure-port=0",
		"--secure-port=" + strconv.Itoa(port),
		"--service-account-issuer=https://127.0.0.1:" + strconv.Itoa(port) + "/",
		"--service-account-key-file=" + filepath.Join(certDir, "sa-signer.crt"),
		"--service-account-signing-key-file=" + filepath.Join(certDir, "sa-signer.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
	}
}

// TestEnvtestControlPlane runs the binary as envtest does: as etcd (a
// link named etcd) with envtest's etcd flags, and as kube-apiserver with
// its kube-apiserver flags and the certificates envtest writes in
// --cert-dir. The server serves the certificate found there, answers
// /healthz to anonymous clients only once the system namespaces, the
// kubernetes Service and the bootstrap policy exist, authenticates
// client certificates of --client-ca-file, and both exit on SIGTERM.
func TestEnvtestControlPlane(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	etcdBin := filepath.Join(dir, "etcd")
	if err := os.Symlink(bin, etcdBin); err != nil {
		t.Fatal(err)
	}
	help, err := exec.Command(etcdBin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "--unsafe-no-fsync") {
		t.Fatalf("etcd --help: %v (envtest looks for --unsafe-no-fsync in it)\n%.300s", err, help)
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	etcd := start(t, etcdBin, "--advertise-client-urls="+etcdURL, "--listen-client-urls="+etcdURL,
		"--listen-peer-urls=http://127.0.0.1:"+strconv.Itoa(freePort(t)), "--data-dir="+filepath.Join(dir, "etcd-data"),
		"--unsafe-no-fsync=true")
	waitOK(t, http.DefaultClient, etcdURL+"/health", etcd)

	certDir := filepath.Join(dir, "certs")
	pki := writeEnvtestPKI(t, certDir)
	port := freePort(t)
	apiserver := start(t, bin, envtestAPIServerArgs(certDir, etcdURL, port)...)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.servingCAs}}}
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	// A TLS handshake that verifies against envtest's CA: the server
	// serves --cert-dir's apiserver.crt.
	waitOK(t, anonymous, base+"/healthz", apiserver)

	admin, err := kubernetes.NewForConfig(&rest.Config{Host: base, TLSClientConfig: rest.TLSClientConfig{
		CAData: pki.servingCAPEM, CertData: pki.adminCert, KeyData: pki.adminKey,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if _, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s once healthy: %v", ns, err)
		}
	}
	if _, err := admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
		t.Errorf("the kubernetes service once healthy: %v", err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Get(ctx, "cluster-admin", metav1.GetOptions{}); err != nil {
		t.Errorf("the bootstrap policy once healthy: %v", err)
	}

	for name, p := range map[string]*process{"kube-apiserver": apiserver, "etcd": etcd} {
		if err := p.stop(); err != nil {
			t.Errorf("%s after SIGTERM: %v", name, err)
		}
	}
}

// TestCertDirGenerated: without a certificate in --cert-dir, the server
// generates apiserver.crt and apiserver.key there, as kube-apiserver
// does, serves them, and keeps the rest of its files there too rather
// than in the working directory.
func TestCertDirGenerated(t *testing.T) {
	bin := build(t)
	certDir, work := t.TempDir(), t.TempDir()
	port := freePort(t)
	p := startIn(t, work, bin, "--cert-dir="+certDir, "--secure-port="+strconv.Itoa(port), "--embedded-etcd-unsafe-no-fsync")
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	waitOK(t, insecure, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", p)

	certPEM, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(certDir, "apiserver.key")); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Errorf("the served certificate is not --cert-dir's apiserver.crt: %v", err)
	} else {
		conn.Close()
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("the working directory got %d entries (%s...), want none", len(entries), entries[0].Name())
	}
	if err := p.stop(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

// TestEnvtestAssets: envtest-assets writes KUBEBUILDER_ASSETS's
// kube-apiserver and etcd, the latter acting as etcd, and a tarball in
// the layout setup-envtest sideloads (regular files, executable, under
// controller-tools/envtest/).
func TestEnvtestAssets(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	assets, tarball := filepath.Join(dir, "bin"), filepath.Join(dir, "envtest.tar.gz")
	if out, err := exec.Command(bin, "envtest-assets", assets, "--tarball", tarball).CombinedOutput(); err != nil {
		t.Fatalf("envtest-assets: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(assets, "etcd"), "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "etcd Version: 3.") {
		t.Errorf("etcd --version: %v\n%s", err, out)
	}
	out, err = exec.Command(filepath.Join(assets, "kube-apiserver"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "miniapiserver ") {
		t.Errorf("kube-apiserver version: %v\n%s", err, out)
	}

	info, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Typeflag != tar.TypeReg || hdr.Mode&0o111 == 0 || hdr.Size != info.Size() {
			t.Errorf("%s: type %c, mode %o, size %d; want an executable regular file of %d bytes", hdr.Name, hdr.Typeflag, hdr.Mode, hdr.Size, info.Size())
		}
	}
	if got := strings.Join(names, " "); got != "controller-tools/envtest/kube-apiserver controller-tools/envtest/etcd" {
		t.Errorf("tarball entries %q", got)
	}
}

// process is a started binary whose exit is awaited once.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

func start(t *testing.T, bin string, args ...string) *process {
	return startIn(t, "", bin, args...)
}

func startIn(t *testing.T, dir, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	logFile, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		p.done <- nil
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("%s %s:\n%s", filepath.Base(bin), strings.Join(args, " "), tail(out, 3000))
		}
	})
	return p
}

// stop sends SIGTERM and waits for the exit, at most envtest's stop
// timeout (20 s); an exit by the signal (etcd re-raises it) is clean.
func (p *process) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.done:
		p.done <- nil
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM {
			return nil
		}
		return err
	case <-time.After(20 * time.Second):
		return errors.New("still running 20 s after SIGTERM")
	}
}

// waitOK polls url until it answers 200, failing if p exits first or a
// minute passes.
func waitOK(t *testing.T, c *http.Client, url string, p *process) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last error
	for time.Now().Before(deadline) {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("exited before %s answered: %v", url, err)
		default:
		}
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: %v", url, last)
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// envtestPKI are the credentials envtest writes before starting
// kube-apiserver, and those its clients use.
type envtestPKI struct {
	servingCAs          *x509.CertPool
	servingCAPEM        []byte
	adminCert, adminKey []byte
}

// writeEnvtestPKI writes into dir what envtest does: apiserver.crt and
// .key signed by a CA of its own, the client CA of its users, and a
// service account signer whose certificate is given as the key file.
func writeEnvtestPKI(t *testing.T, dir string) envtestPKI {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	servingCA, servingCAKey := newCA(t, "serving-ca")
	cert, key := issue(t, servingCA, servingCAKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	writeFile(t, filepath.Join(dir, "apiserver.crt"), cert)
	writeFile(t, filepath.Join(dir, "apiserver.key"), key)

	clientCA, clientCAKey := newCA(t, "client-cert-auth-ca")
	writeFile(t, filepath.Join(dir, "client-cert-auth-ca.crt"), certPEM(clientCA))
	adminCert, adminKey := issue(t, clientCA, clientCAKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	saCert := selfSign(t, saKey, "sa-signer")
	writeFile(t, filepath.Join(dir, "sa-signer.crt"), certPEM(saCert))
	writeFile(t, filepath.Join(dir, "sa-signer.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}))

	pool := x509.NewCertPool()
	pool.AddCert(servingCA)
	return envtestPKI{servingCAs: pool, servingCAPEM: certPEM(servingCA), adminCert: adminCert, adminKey: adminKey}
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return selfSign(t, key, name), key
}

func selfSign(t *testing.T, key crypto.Signer, name string) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// issue signs tmpl with the CA and returns the certificate and its new
// key, in PEM.
func issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (certPEMData, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func certPEM(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
