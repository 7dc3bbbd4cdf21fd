package hamode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// bin is the miniapiserver binary TestMain builds.
var bin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "miniapiserver-hamode-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "miniapiserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/miniapiserver/miniapiserver/cmd/miniapiserver").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// server is a miniapiserver process in the embedded HA mode, on loopback
// ports of its own.
type server struct {
	name string
	dir  string
	// securePort is the API's; peerURL and clientURL its etcd member's.
	securePort         int
	peerURL, clientURL string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr bytes.Buffer
}

// newServer makes server name's data dir under root and picks its ports.
// Unless it is the first server of a cluster, the cluster's CA is copied
// into its pki dir from the first server's (README: "HA with three
// binaries").
func newServer(t testing.TB, root, name string, first *server) *server {
	t.Helper()
	s := &server{name: name, dir: filepath.Join(root, name)}
	// Stopped at the end of the test that made it, not of the subtest
	// that started it.
	t.Cleanup(s.stop)
	s.securePort = freePort(t)
	s.peerURL = "https://127.0.0.1:" + strconv.Itoa(freePort(t))
	s.clientURL = "https://127.0.0.1:" + strconv.Itoa(freePort(t))
	if first != nil {
		for _, f := range []string{"etcd-ca.crt", "etcd-ca.key"} {
			data, err := os.ReadFile(filepath.Join(first.dir, "pki", f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(s.dir, "pki"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.dir, "pki", f), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// args are the flags of the server; mode is --embedded-etcd-cluster-init
// or --embedded-etcd-join=URL.
func (s *server) args(mode string) []string {
	return []string{mode,
		"--data-dir", s.dir,
		"--secure-port", strconv.Itoa(s.securePort),
		"--embedded-etcd-name", s.name,
		"--embedded-etcd-peer-url", s.peerURL,
		"--embedded-etcd-client-url", s.clientURL,
		"--embedded-etcd-unsafe-no-fsync",
		"--log-level", "warn",
	}
}

// start starts the process with the flags of mode and waits until its
// /readyz passes.
func (s *server) start(t testing.TB, mode string) kubernetes.Interface {
	t.Helper()
	if err := s.launch(mode); err != nil {
		t.Fatal(err)
	}
	return s.waitReady(t)
}

func (s *server) launch(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stderr.Reset()
	cmd := exec.Command(bin, s.args(mode)...)
	cmd.Stderr = &lockedWriter{mu: &s.mu, w: &s.stderr}
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(s.exited)
	return nil
}

// run runs the process with the flags of mode until it exits (bounded),
// and returns its error and what it wrote on stderr.
func (s *server) run(t testing.TB, mode string) (error, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, s.args(mode)...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	return err, stderr.String()
}

// waitReady waits until the server's /readyz passes and returns a client
// of its administrator.
func (s *server) waitReady(t testing.TB) kubernetes.Interface {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if client, err := s.ready(t.Context()); err == nil {
			return client
		} else if time.Now().After(deadline) {
			t.Fatalf("%s not ready in time: %v\n%s", s.name, err, s.log())
		}
		select {
		case <-s.exited:
			t.Fatalf("%s exited while starting:\n%s", s.name, s.log())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *server) ready(ctx context.Context) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.dir, "kubeconfig"))
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = -1, -1
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		return nil, err
	}
	return client, nil
}

// kill kills the process (SIGKILL) as a crash would.
func (s *server) kill(t testing.TB) {
	t.Helper()
	s.signal(syscall.SIGKILL)
	<-s.exited
}

// stop stops the process gracefully (SIGTERM), killing it after 30 s.
func (s *server) stop() {
	if !s.signal(syscall.SIGTERM) {
		return
	}
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.signal(syscall.SIGKILL)
		<-s.exited
	}
}

// signal signals the process, and reports whether one was started.
func (s *server) signal(sig os.Signal) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return false
	}
	_ = s.cmd.Process.Signal(sig)
	return true
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// etcdClient is a client of the member's TLS client URL, authenticated
// with the member's own certificate.
func (s *server) etcdClient(t testing.TB) *clientv3.Client {
	t.Helper()
	pki := filepath.Join(s.dir, "pki")
	tlsConfig, err := transport.TLSInfo{CertFile: filepath.Join(pki, "etcd-member.crt"), KeyFile: filepath.Join(pki, "etcd-member.key"),
		TrustedCAFile: filepath.Join(pki, "etcd-ca.crt")}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.clientURL}, TLS: tlsConfig, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// isLeader reports whether the server's member is the etcd leader.
func (s *server) isLeader(t testing.TB) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := s.etcdClient(t).Status(ctx, s.clientURL)
	if err != nil {
		t.Fatalf("status of %s's member: %v", s.name, err)
	}
	return st.Leader == st.Header.MemberId
}

// etcdctl runs `miniapiserver etcd ARGS --data-dir DIR` against the
// member of s.
func (s *server) etcdctl(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(append([]string{"etcd"}, args...), "--data-dir", s.dir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("miniapiserver etcd %v: %v\n%s\n%s's log:\n%s", args, err, out, s.name, s.log())
	}
	return string(out)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func freePort(t testing.TB) int {
	t.Helper()
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// retry calls f until it succeeds, for at most a minute.
func retry(t testing.TB, what string, f func(ctx context.Context) error) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || errors.Is(t.Context().Err(), context.Canceled) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
