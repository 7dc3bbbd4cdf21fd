package chaos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/test/internal/etcdcluster"
)

// readyTimeout bounds a replica's start (a busy machine is slow).
const readyTimeout = 2 * time.Minute

// requestTimeout is the replicas' --request-timeout: a write etcd cannot
// answer fails after it.
const requestTimeout = 5 * time.Second

// cluster is an etcd cluster in this process and miniapiserver replicas
// over it, each a process of its own.
type cluster struct {
	etcd     *etcdcluster.Cluster
	replicas []*replica
}

// startCluster starts members etcd members and n replicas, with their
// data under t's temp dir; everything stops at the test's cleanup.
func startCluster(t testing.TB, members, n int) *cluster {
	t.Helper()
	dir := t.TempDir()
	ec, err := etcdcluster.Start(filepath.Join(dir, "etcd"), members)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{etcd: ec}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			// The members are etcd's embed servers inside this test
			// binary: one that does not close is etcd's harness problem,
			// not the replicas', and it dies with the binary. Logged so
			// that a hang is named, not failed on.
			t.Logf("stopping the etcd members: %v", err)
		}
		if t.Failed() {
			c.logWarnings(t)
		}
	})
	securePort, err := etcdcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	httpPort, err := etcdcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c.replicas = append(c.replicas, &replica{
			index: i, dir: filepath.Join(dir, "replica-"+strconv.Itoa(i)),
			host: "127.0.0." + strconv.Itoa(i+1), securePort: securePort, httpPort: httpPort,
			etcd: ec.ClientURLs(),
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, r := range c.replicas {
		wg.Go(func() { errs[i] = r.start() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return c
}

// addresses are the replicas' plain HTTP host:ports.
func (c *cluster) addresses() []string {
	var as []string
	for _, r := range c.replicas {
		as = append(as, r.address())
	}
	return as
}

// logWarnings logs what the replicas logged (at --log-level warn), to
// explain a failure.
func (c *cluster) logWarnings(t testing.TB) {
	for _, r := range c.replicas {
		logs, _ := filepath.Glob(filepath.Join(r.dir, "log-*.txt"))
		for _, l := range logs {
			data, err := os.ReadFile(l)
			if err == nil && len(data) > 0 {
				t.Logf("replica %d, %s:\n%s", r.index, filepath.Base(l), tail(string(data), 40))
			}
		}
	}
}

func tail(s string, lines int) string {
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return strings.Join(ls[max(len(ls)-lines, 0):], "\n")
}

func (c *cluster) stop() error {
	for _, r := range c.replicas {
		r.kill()
	}
	return c.etcd.Stop()
}

// replica is a miniapiserver process. It listens on its own loopback
// address (127.0.0.<index+1>) at ports shared by all replicas, as replicas
// on hosts of their own would, and serves plain HTTP there for the
// clients (no TLS or tokens to share between replicas).
type replica struct {
	index      int
	dir        string
	host       string
	securePort int
	httpPort   int
	etcd       []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	starts int
}

func (r *replica) address() string { return net.JoinHostPort(r.host, strconv.Itoa(r.httpPort)) }

// start runs the replica's process and waits until /readyz passes.
func (r *replica) start() error {
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return err
	}
	r.mu.Lock()
	r.starts++
	logFile, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("log-%d.txt", r.starts)))
	if err != nil {
		r.mu.Unlock()
		return err
	}
	recordReplicaLog(logFile.Name())
	cmd := exec.Command(binary,
		"--data-dir", filepath.Join(r.dir, "data"),
		"--etcd-servers", strings.Join(r.etcd, ","),
		"--etcd-compaction-interval", "0", // the schedule compacts
		"--bind-address", r.host, "--secure-port", strconv.Itoa(r.securePort),
		"--advertise-address", "10.200.0."+strconv.Itoa(r.index+1),
		"--insecure-bind-address", r.host, "--insecure-port", strconv.Itoa(r.httpPort),
		"--request-timeout", requestTimeout.String(),
		// Watches end every 5-10 s: more reconnections to check.
		"--min-request-timeout", "5s",
		"--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The replica dies with the test binary, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		logFile.Close()
		return fmt.Errorf("replica %d: %w", r.index, err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Wait()
		logFile.Close()
	}()
	r.cmd, r.exited = cmd, exited
	r.mu.Unlock()
	return r.waitReady(exited)
}

// waitReady polls /readyz until it answers 200.
func (r *replica) waitReady(exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for {
		if readyz(ctx, r.address()) == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("replica %d exited before it was ready (see %s)", r.index, r.dir)
		case <-ctx.Done():
			return fmt.Errorf("replica %d not ready in %v", r.index, readyTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kill sends SIGKILL to the replica's process and waits until it is gone.
func (r *replica) kill() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// readyz returns nil when GET /readyz at address answers 200.
func readyz(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}
