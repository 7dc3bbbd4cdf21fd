package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// The kubeadm cluster's networks (kubeadm's defaults), and the address
// the API servers advertise: kube-apiserver refuses a loopback one (the
// kubernetes Service's endpoints may not list it), and none dials it
// here, so it is a documentation address (TEST-NET-1) that no host has.
const (
	kubeadmServiceCIDR = "10.96.0.0/12"
	kubeadmPodCIDR     = "10.244.0.0/16"
	advertiseAddress   = "192.0.2.10"
)

// kubeadmAPIServerFlags are the flags kubeadm init (v1.37) runs
// kube-apiserver with, in its order, for etcd at etcdURL and the secure
// port port, plus two of ours: Secrets encrypted at rest, and
// --bind-address, since kubeadm's server listens on every interface and
// this one runs on a shared machine.
func kubeadmAPIServerFlags(p *kubeadmPKI, etcdURL string, port int) []flag {
	return []flag{
		{"advertise-address", advertiseAddress},
		{"allow-privileged", "true"},
		{"authorization-mode", "Node,RBAC"},
		{"client-ca-file", p.path("pki/ca.crt")},
		{"enable-admission-plugins", "NodeRestriction"},
		{"enable-bootstrap-token-auth", "true"},
		{"etcd-cafile", p.path("pki/etcd/ca.crt")},
		{"etcd-certfile", p.path("pki/apiserver-etcd-client.crt")},
		{"etcd-keyfile", p.path("pki/apiserver-etcd-client.key")},
		{"etcd-servers", etcdURL},
		{"kubelet-client-certificate", p.path("pki/apiserver-kubelet-client.crt")},
		{"kubelet-client-key", p.path("pki/apiserver-kubelet-client.key")},
		{"kubelet-preferred-address-types", "InternalIP,ExternalIP,Hostname"},
		{"proxy-client-cert-file", p.path("pki/front-proxy-client.crt")},
		{"proxy-client-key-file", p.path("pki/front-proxy-client.key")},
		{"requestheader-allowed-names", frontProxyClient},
		{"requestheader-client-ca-file", p.path("pki/front-proxy-ca.crt")},
		{"requestheader-extra-headers-prefix", "X-Remote-Extra-"},
		{"requestheader-group-headers", "X-Remote-Group"},
		{"requestheader-username-headers", "X-Remote-User"},
		{"secure-port", strconv.Itoa(port)},
		{"service-account-issuer", issuer},
		{"service-account-key-file", p.path("pki/sa.pub")},
		{"service-account-signing-key-file", p.path("pki/sa.key")},
		{"service-cluster-ip-range", kubeadmServiceCIDR},
		{"tls-cert-file", p.path("pki/apiserver.crt")},
		{"tls-private-key-file", p.path("pki/apiserver.key")},
		{"encryption-provider-config", p.path("encryption-config.yaml")},
		{"bind-address", "127.0.0.1"},
	}
}

// miniapiserverRefuses are the flags of kubeadmAPIServerFlags that
// miniapiserver does not take yet: it is run without them (the one place
// the swap departs from "the same command line").
// TODO(issue 22): empty this as the kube-apiserver flag table (branch
// flags) lands.
var miniapiserverRefuses = map[string]bool{}

// kubeadmComponentFlags are the flags kubeadm runs kube-controller-manager
// and kube-scheduler with, plus their secure port and log level, and a
// longer leader-election renewal deadline: kube's 10 s would end a
// component whose API server is down that long, as a swap of servers
// may be (under kubeadm the kubelet restarts it; here nothing would).
func kubeadmComponentFlags(p *kubeadmPKI, name string, port int) []flag {
	conf := p.path("scheduler.conf")
	if name == "kube-controller-manager" {
		conf = p.path("controller-manager.conf")
	}
	flags := []flag{
		{"authentication-kubeconfig", conf},
		{"authorization-kubeconfig", conf},
		{"bind-address", "127.0.0.1"},
		{"kubeconfig", conf},
		{"leader-elect", "true"},
		{"leader-elect-lease-duration", "90s"},
		{"leader-elect-renew-deadline", "80s"},
		{"secure-port", strconv.Itoa(port)},
		{"v", "2"},
	}
	if name != "kube-controller-manager" {
		return flags
	}
	return append(flags,
		flag{"allocate-node-cidrs", "true"},
		flag{"client-ca-file", p.path("pki/ca.crt")},
		flag{"cluster-cidr", kubeadmPodCIDR},
		flag{"cluster-name", "kubernetes"},
		flag{"cluster-signing-cert-file", p.path("pki/ca.crt")},
		flag{"cluster-signing-key-file", p.path("pki/ca.key")},
		flag{"controllers", "*,bootstrapsigner,tokencleaner"},
		flag{"requestheader-client-ca-file", p.path("pki/front-proxy-ca.crt")},
		flag{"root-ca-file", p.path("pki/ca.crt")},
		flag{"service-account-private-key-file", p.path("pki/sa.key")},
		flag{"service-cluster-ip-range", kubeadmServiceCIDR},
		flag{"use-service-account-credentials", "true"},
	)
}

// startKubeadmEtcd runs etcd as kubeadm's static pod runs it (TLS for
// clients and peers, client certificates required), with miniapiserver's
// etcd personality (etcd's own main, in a link named etcd), its data in
// dir/etcd. It returns etcd's client URL and a client of it with the API
// server's etcd client certificate.
func startKubeadmEtcd(t *testing.T, dir, mini string, p *kubeadmPKI) (string, *clientv3.Client) {
	bin := filepath.Join(dir, "etcd")
	if err := os.Symlink(mini, bin); err != nil {
		t.Fatal(err)
	}
	var ports [3]int
	for i := range ports {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = port
	}
	client := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("https://127.0.0.1:%d", ports[1])
	metrics := fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	args := []string{
		"--advertise-client-urls=" + client,
		"--cert-file=" + p.path("pki/etcd/server.crt"),
		"--client-cert-auth=true",
		"--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--feature-gates=InitialCorruptCheck=true",
		"--watch-progress-notify-interval=5s",
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=swap=" + peer,
		"--key-file=" + p.path("pki/etcd/server.key"),
		"--listen-client-urls=" + client,
		"--listen-metrics-urls=" + metrics,
		"--listen-peer-urls=" + peer,
		"--name=swap",
		"--peer-cert-file=" + p.path("pki/etcd/peer.crt"),
		"--peer-client-cert-auth=true",
		"--peer-key-file=" + p.path("pki/etcd/peer.key"),
		"--peer-trusted-ca-file=" + p.path("pki/etcd/ca.crt"),
		"--snapshot-count=10000",
		"--trusted-ca-file=" + p.path("pki/etcd/ca.crt"),
		"--unsafe-no-fsync", // not kubeadm's: a test's etcd need not survive a power cut
	}
	proc, err := startProcess("etcd", filepath.Join(dir, "etcd.log"), bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.stop) // registered first, so run last: after every server
	if err := waitEtcdHealthy(t.Context(), proc, metrics+"/health", time.Minute); err != nil {
		t.Fatal(err)
	}
	cli, err := etcdClient(p, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return client, cli
}

// waitEtcdHealthy polls etcd's /health until it says healthy.
func waitEtcdHealthy(ctx context.Context, p *process, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if ended, how := p.exited(); ended {
			return fmt.Errorf("etcd exited (%s); its log ends:\n%s", how, tail(p, 30))
		}
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"health":"true"`) {
				return nil
			}
			last = string(body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("etcd not healthy after %v (last: %s)", timeout, last)
}

// etcdClient is a client of etcd at url with the API server's client
// certificate.
func etcdClient(p *kubeadmPKI, url string) (*clientv3.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.path("pki/apiserver-etcd-client.crt"), p.path("pki/apiserver-etcd-client.key"))
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(p.path("pki/etcd/ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	return clientv3.New(clientv3.Config{
		Endpoints: []string{url}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12},
	})
}

// startSwapServer runs the API server kind ("kube-apiserver", from
// $E2E_BIN, or "miniapiserver", the binary mini) with kubeadm's flags on
// port, its log in dir/<log>.log, and waits until it is ready. The
// process is stopped at top's cleanup (the whole test's: t may be a step
// of it) if the test has not stopped it before.
func startSwapServer(t, top *testing.T, dir, kind, mini, log string, p *kubeadmPKI, etcdURL string, port int) *apiserver {
	bin, cwd := filepath.Join(os.Getenv("E2E_BIN"), "kube-apiserver"), ""
	var args []string
	for _, f := range kubeadmAPIServerFlags(p, etcdURL, port) {
		if kind == "miniapiserver" && miniapiserverRefuses[f.name] {
			continue
		}
		args = append(args, f.String())
	}
	if kind == "miniapiserver" {
		// What miniapiserver keeps for itself goes to its default
		// --data-dir, under the working directory.
		bin, cwd = mini, filepath.Join(dir, "miniapiserver-cwd")
		if err := os.MkdirAll(cwd, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s := &apiserver{name: kind, url: fmt.Sprintf("https://127.0.0.1:%d", port), log: filepath.Join(dir, log+".log")}
	proc, err := startProcessIn(cwd, kind, s.log, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	s.proc = proc
	top.Cleanup(func() { stopServer(s) })
	if err := waitHealthy(t.Context(), proc, s.url+"/readyz", "", 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}
