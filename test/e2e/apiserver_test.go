package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Addresses of the simulated cluster.
const (
	serviceCIDR = "10.96.0.0/16"
	clusterCIDR = "10.244.0.0/16"
	issuer      = "https://kubernetes.default.svc.cluster.local"
)

// flag is one command line flag, --name=value.
type flag struct{ name, value string }

func (f flag) String() string { return "--" + f.name + "=" + f.value }

// apiserverFlags are the kube-apiserver flags a cluster like this one is
// run with (kubeadm passes the same): serving and client certificates,
// the admin token, RBAC (kubeadm's Node,RBAC but for Node, which no
// component here needs), the service network and the service-account keys
// the controller-manager signs tokens with. A server that lacks one is run
// without it (see startMiniapiserver); add here what the cluster needs.
func apiserverFlags(p *pki, port int) []flag {
	return []flag{
		{"bind-address", "127.0.0.1"},
		{"secure-port", strconv.Itoa(port)},
		{"tls-cert-file", p.path("apiserver.crt")},
		{"tls-private-key-file", p.path("apiserver.key")},
		{"token-auth-file", p.path("tokens.csv")},
		{"client-ca-file", p.path("signing-ca.crt")},
		{"authorization-mode", "RBAC"},
		{"service-cluster-ip-range", serviceCIDR},
		{"service-account-issuer", issuer},
		{"service-account-key-file", p.path("sa.pub")},
		{"service-account-signing-key-file", p.path("sa.key")},
		{"api-audiences", issuer},
	}
}

// apiserver is the API server under test.
type apiserver struct {
	name string
	url  string
	// proc is the server's process, when the test started it itself.
	proc *process
	// log is the server's log file.
	log string
	// missingFlags are the apiserverFlags the server does not have.
	missingFlags []string
}

// startMiniapiserver runs the miniapiserver binary ($MINIAPISERVER, or
// built from this repository) on an embedded etcd in dir, with the
// apiserverFlags it has. The namespace controller is off: the
// controller-manager's runs.
func startMiniapiserver(t *testing.T, dir string, p *pki, port int) *apiserver {
	bin := miniapiserverBinary(t, dir)
	help, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --help: %v\n%s", bin, err, help)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`--([a-z0-9-]+)`).FindAllStringSubmatch(string(help), -1) {
		known[m[1]] = true
	}
	s := &apiserver{name: "miniapiserver", url: fmt.Sprintf("https://127.0.0.1:%d", port), log: filepath.Join(dir, "miniapiserver.log")}
	args := []string{"--data-dir=" + filepath.Join(dir, "data"), "--embedded-etcd-unsafe-no-fsync",
		"--namespace-controller=false", "--log-level=info"}
	for _, f := range apiserverFlags(p, port) {
		if known[f.name] {
			args = append(args, f.String())
		} else {
			s.missingFlags = append(s.missingFlags, "--"+f.name)
		}
	}
	if len(s.missingFlags) > 0 {
		t.Logf("miniapiserver has no %s: run without", strings.Join(s.missingFlags, ", "))
	}
	s.proc, err = startProcess(s.name, s.log, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.proc.stop)
	if err := waitHealthy(t.Context(), s.proc, s.url+"/readyz", p.token, time.Minute); err != nil {
		t.Fatal(err)
	}
	return s
}

// miniapiserverBinary is $MINIAPISERVER, or else miniapiserver built
// from this repository into dir.
func miniapiserverBinary(t *testing.T, dir string) string {
	if bin := os.Getenv("MINIAPISERVER"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "miniapiserver")
	build := exec.Command("go", "build", "-o", bin, "./cmd/miniapiserver")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building miniapiserver: %v\n%s", err, out)
	}
	return bin
}

// startKubeSets are the apiserverFlags start-kube.sh passes itself; the
// test gives it their values through its environment (KUBE_PORT,
// PEER_TOKEN) and its state folder (the service-account keys), and
// checks its command line says so.
var startKubeSets = map[string]bool{
	"bind-address": true, "secure-port": true, "token-auth-file": true, "authorization-mode": true,
	"service-cluster-ip-range": true, "service-account-issuer": true, "api-audiences": true,
	"service-account-key-file": true, "service-account-signing-key-file": true,
}

// startReference runs the reference kube-apiserver and its etcd with
// $REFERENCE_KUBE/start-kube.sh (binaries in $PEER_BIN), its state in the
// pki's folder, the other apiserverFlags in KUBE_EXTRA_ARGS; stop.sh ends
// both at cleanup.
func startReference(t *testing.T, p *pki, port int) *apiserver {
	ref := envOr("REFERENCE_KUBE", "/work/shared/reference-kube")
	bin := envOr("PEER_BIN", "/tmp/peer/bin")
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		t.Fatalf("-reference needs the reference kube-apiserver in $PEER_BIN (%v); build it with %s/build.sh", err, ref)
	}
	var extra []string
	for _, f := range apiserverFlags(p, port) {
		if !startKubeSets[f.name] {
			extra = append(extra, f.String())
		}
	}
	env := append(os.Environ(), "PEER_STATE="+p.dir, "PEER_BIN="+bin, "PEER_TOKEN="+p.token,
		"KUBE_PORT="+strconv.Itoa(port), "KUBE_AUTHZ_MODE=RBAC", "KUBE_EXTRA_ARGS="+strings.Join(extra, " "))
	stop := func() {
		cmd := exec.Command(filepath.Join(ref, "stop.sh"))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("stop.sh: %v\n%s", err, out)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	start := exec.CommandContext(ctx, filepath.Join(ref, "start-kube.sh"))
	start.Env = env
	var stderr strings.Builder
	start.Stderr = &stderr
	t.Cleanup(stop)
	out, err := start.Output()
	if err != nil {
		t.Fatalf("start-kube.sh: %v\n%s", err, stderr.String())
	}
	s := &apiserver{name: "kube-apiserver", log: filepath.Join(p.dir, "logs", "kube-apiserver.log")}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "export PEER_URL="); ok {
			s.url = v
		}
	}
	if s.url != fmt.Sprintf("https://127.0.0.1:%d", port) {
		t.Fatalf("start-kube.sh printed PEER_URL %q, want port %d:\n%s", s.url, port, out)
	}
	script, err := os.ReadFile(filepath.Join(p.dir, "kube-apiserver.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range apiserverFlags(p, port) {
		if startKubeSets[f.name] && !strings.Contains(string(script), f.String()) {
			t.Fatalf("start-kube.sh no longer runs kube-apiserver with %s:\n%s", f, script)
		}
	}
	return s
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
