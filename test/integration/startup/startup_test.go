// Package startup runs the miniapiserver binary as a user would: bad flags
// are refused with one line naming the flag, and the kubeconfig written at
// startup works with kubectl.
package startup

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is miniapiserver, built once for the package's tests.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}

// build compiles miniapiserver into a temporary directory, once.
func build(t *testing.T) string {
	t.Helper()
	binary.once.Do(func() {
		if binary.dir, binary.err = os.MkdirTemp("", "startup-test-"); binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "miniapiserver")
		cmd := exec.Command("go", "build", "-o", binary.path, "github.com/miniapiserver/miniapiserver/cmd/miniapiserver")
		if out, err := cmd.CombinedOutput(); err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func TestStartup(t *testing.T) {
	bin := build(t)
	t.Run("bad flags", func(t *testing.T) {
		cases := []struct {
			args []string
			flag string
		}{
			{[]string{"--secure-port=abc"}, "--secure-port"},
			{[]string{"--secure-port=70000"}, "--secure-port"},
			{[]string{"--log-level=loud"}, "--log-level"},
			{[]string{"--etcd-servers=localhost:2379"}, "--etcd-servers"},
			{[]string{"--etcd-servers-overrides=events#http://127.0.0.1:2379"}, "--etcd-servers-overrides"},
			{[]string{"--etcd-servers-overrides=/events#http://127.0.0.1:2379;;"}, "--etcd-servers-overrides"},
			{[]string{"--etcd-servers-overrides=/events#127.0.0.1:2379"}, "--etcd-servers-overrides"},
			{[]string{"--etcd-cafile=ca.crt"}, "--etcd-cafile"},
			{[]string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-certfile=etcd.crt"}, "--etcd-keyfile"},
			{[]string{"--storage-backend=etcd2"}, "--storage-backend"},
			{[]string{"--etcd-healthcheck-timeout=-1s"}, "--etcd-healthcheck-timeout"},
			{[]string{"--watch-cache-sizes=pods"}, "--watch-cache-sizes"},
			{[]string{"--embedded-etcd-cluster-init"}, "--embedded-etcd-peer-url"},
			{[]string{"--embedded-etcd-join=http://10.0.0.1:2380", "--embedded-etcd-peer-url=https://10.0.0.2:2380"}, "--embedded-etcd-join"},
			{[]string{"--embedded-etcd-cluster-init", "--embedded-etcd-peer-url=https://10.0.0.2:2380", "--etcd-servers=http://10.0.0.3:2379"}, "--etcd-servers"},
			{[]string{"--no-such-flag"}, "--no-such-flag"},
			{[]string{"--allow-privileged=false"}, "--allow-privileged"},
			{[]string{"--disable-admission-plugins=NoSuchPlugin"}, "--disable-admission-plugins"},
			{[]string{"--enable-admission-plugins=EventRateLimit"}, "--admission-control-config-file: EventRateLimit: "},
			{[]string{"--enable-admission-plugins=LimitRanger", "--disable-admission-plugins=LimitRanger"}, "--disable-admission-plugins"},
			{[]string{"--admission-control-config-file=/no/such/file"}, "--admission-control-config-file"},
			// kube's flags: refused ones name themselves and say why,
			// as do kube's checks of the supported ones.
			{[]string{"--tracing-config-file=/etc/kubernetes/tracing.yaml"}, "--tracing-config-file: not supported by miniapiserver: "},
			{[]string{"--cors-allowed-origins=example.com"}, "--cors-allowed-origins: not supported by miniapiserver: "},
			{[]string{"--feature-gates=ClusterTrustBundle=false"}, "--feature-gates: ClusterTrustBundle=false: not supported by miniapiserver"},
			{[]string{"--feature-gates=NoSuchGate=true"}, "--feature-gates"},
			{[]string{"--runtime-config=api/all=false"}, "--runtime-config"},
			{[]string{"--runtime-config=api/beta=true"}, "--runtime-config"},
			{[]string{"--service-cluster-ip-range=10.96.0.0/12,10.112.0.0/12"}, "--service-cluster-ip-range"},
			{[]string{"--goaway-chance=0.5"}, "--goaway-chance"},
			{[]string{"--min-request-timeout=-1"}, "--min-request-timeout"},
			{[]string{"--tls-min-version=VersionTLS14"}, "--tls-min-version"},
			{[]string{"--audit-log-mode=blocking-strict"}, "--audit-log-mode"},
			{[]string{"--logging-format=xml"}, "--logging-format"},
			{[]string{"--vmodule=nopattern"}, "--vmodule"},
			{[]string{"--version=v1.30.0"}, "--version"},
		}
		for _, tc := range cases {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				cmd := exec.Command(bin, append(tc.args, "--data-dir", t.TempDir())...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				exit, ok := err.(*exec.ExitError)
				if !ok || exit.ExitCode() == 0 {
					t.Fatalf("want a non-zero exit, got %v", err)
				}
				msg := stderr.String()
				if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "miniapiserver: ") || !strings.Contains(msg, tc.flag) {
					t.Errorf("want one line naming %s, got %q (stdout %q)", tc.flag, msg, stdout.String())
				}
			})
		}
	})
	t.Run("kubeconfig works with kubectl", func(t *testing.T) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			t.Skip("kubectl is not on PATH: install kubectl to check the startup kubeconfig")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--data-dir", t.TempDir(), "--secure-port=0", "--embedded-etcd-unsafe-no-fsync", "--log-level=warn")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kubeconfig := ""
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if path, ok := strings.CutPrefix(sc.Text(), "kubeconfig: "); ok {
				kubeconfig = path
				break
			}
		}
		go func() {
			for sc.Scan() {
			}
		}()
		if kubeconfig == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no kubeconfig line on stdout (%v)", sc.Err())
		}
		out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "namespaces", "-o", "name").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "namespace/default") {
			t.Errorf("kubectl get namespaces: %v\n%s", err, out)
		}
		// SIGTERM: a clean shutdown, exit 0.
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	})
}
