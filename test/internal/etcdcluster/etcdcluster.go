// Package etcdcluster runs an etcd cluster inside a test binary, each
// member on its own loopback ports and data dir, for the tests that run
// miniapiserver replicas over a cluster (test/ha, test/chaos) and inject
// faults into it: a member killed as a crash would kill it, restarted on
// its data, the leader found and killed, a majority stopped.
package etcdcluster

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// readyTimeout bounds the wait for members to become ready (a busy
// machine running many test binaries under -race is slow).
const readyTimeout = time.Minute

// Cluster is a cluster of etcd members inside this process.
type Cluster struct {
	mu      sync.Mutex
	configs []*embed.Config
	members []*embed.Etcd
	// closed[i] is closed when member i's last Close has returned (its
	// ports and data dir are free again).
	closed []chan struct{}
}

// Start starts a cluster of n members with their data under dir and
// waits until every member is ready.
func Start(dir string, n int) (*Cluster, error) {
	c := &Cluster{}
	var initial []string
	for i := range n {
		cfg, err := memberConfig(dir, i)
		if err != nil {
			return nil, err
		}
		c.configs = append(c.configs, cfg)
		initial = append(initial, cfg.Name+"="+cfg.AdvertisePeerUrls[0].String())
	}
	for _, cfg := range c.configs {
		cfg.InitialCluster = strings.Join(initial, ",")
	}
	c.members = make([]*embed.Etcd, n)
	c.closed = make([]chan struct{}, n)
	for i := range n {
		if err := c.startMember(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.WaitReady(c.indices()...); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func memberConfig(dir string, i int) (*embed.Config, error) {
	clientURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "m" + strconv.Itoa(i)
	cfg.Dir = filepath.Join(dir, cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.ListenMetricsUrls = nil
	cfg.InitialClusterToken = "miniapiserver-test-cluster"
	cfg.ClusterState = embed.ClusterStateFlagNew
	return cfg, nil
}

func (c *Cluster) startMember(i int) error {
	e, err := embed.StartEtcd(c.configs[i])
	if err != nil {
		return fmt.Errorf("etcd member %s: %w", c.configs[i].Name, err)
	}
	c.mu.Lock()
	c.members[i] = e
	c.closed[i] = nil
	c.mu.Unlock()
	return nil
}

func (c *Cluster) indices() []int {
	var is []int
	for i := range c.configs {
		is = append(is, i)
	}
	return is
}

// WaitReady waits until members is have joined the cluster and serve.
func (c *Cluster) WaitReady(is ...int) error {
	timeout := time.After(readyTimeout)
	for _, i := range is {
		e := c.member(i)
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			return fmt.Errorf("etcd member %s: %w", e.Config().Name, err)
		case <-timeout:
			return fmt.Errorf("etcd member %s did not become ready in %v", e.Config().Name, readyTimeout)
		}
	}
	return nil
}

func (c *Cluster) member(i int) *embed.Etcd {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.members[i]
}

// Size is the number of members.
func (c *Cluster) Size() int { return len(c.configs) }

// ClientURLs are the members' client URLs, for --etcd-servers.
func (c *Cluster) ClientURLs() []string {
	var urls []string
	for _, cfg := range c.configs {
		urls = append(urls, cfg.AdvertiseClientUrls[0].String())
	}
	return urls
}

// Leader returns the index of the running member that is leader, or -1.
func (c *Cluster) Leader() int {
	for i := range c.configs {
		e := c.member(i)
		if !running(e) {
			continue
		}
		if id := e.Server.Leader(); id != 0 && id == e.Server.MemberID() {
			return i
		}
	}
	return -1
}

// WaitLeader waits up to timeout for a leader among the running members
// and returns its index, or -1.
func (c *Cluster) WaitLeader(timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		if l := c.Leader(); l >= 0 || time.Now().After(deadline) {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func running(e *embed.Etcd) bool {
	select {
	case <-e.Server.StopNotify():
		return false
	default:
		return true
	}
}

// Running reports whether member i runs (was not killed since its start).
func (c *Cluster) Running(i int) bool { return running(c.member(i)) }

// Kill stops member i as a crash would: its raft node stops at once,
// without handing leadership over; its listeners close in the background
// (Restart waits for them). A raft node that does not stop within
// readyTimeout is an error rather than a hung test.
func (c *Cluster) Kill(i int) error {
	e := c.member(i)
	if !running(e) {
		return nil
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		e.Server.HardStop()
	}()
	select {
	case <-stopped:
	case <-time.After(readyTimeout):
		return fmt.Errorf("etcd member %s: its raft node did not stop in %v", c.configs[i].Name, readyTimeout)
	}
	done := make(chan struct{})
	c.mu.Lock()
	c.closed[i] = done
	c.mu.Unlock()
	go func() {
		defer close(done)
		e.Close()
	}()
	return nil
}

// Restart starts killed member i again on its data dir and ports; it
// rejoins the cluster (call WaitReady once a quorum runs: a member alone
// is not ready).
func (c *Cluster) Restart(i int) error {
	c.mu.Lock()
	done := c.closed[i]
	c.mu.Unlock()
	if done == nil {
		return fmt.Errorf("etcd member %s was not killed", c.configs[i].Name)
	}
	select {
	case <-done:
	case <-time.After(readyTimeout):
		return fmt.Errorf("etcd member %s did not close in %v", c.configs[i].Name, readyTimeout)
	}
	// The data dir exists: the member restarts from its WAL, whatever
	// the initial cluster state says.
	return c.startMember(i)
}

// Stop stops every member (those killed: waits for their close). It
// returns an error naming the members that did not close within
// readyTimeout rather than hanging the test binary until its -timeout:
// a member that cannot stop is a finding, and the test that owns it says
// so while its goroutines are still there to read.
func (c *Cluster) Stop() error {
	var wg sync.WaitGroup
	c.mu.Lock()
	stuck := make([]atomic.Bool, len(c.members))
	for i, e := range c.members {
		if e == nil {
			continue
		}
		stuck[i].Store(true)
		done := c.closed[i]
		if done == nil && !running(e) {
			stuck[i].Store(false)
			continue
		}
		wg.Go(func() {
			if done == nil {
				e.Close()
			} else {
				<-done
			}
			stuck[i].Store(false)
		})
	}
	c.mu.Unlock()
	closed := make(chan struct{})
	go func() { wg.Wait(); close(closed) }()
	select {
	case <-closed:
		return nil
	case <-time.After(readyTimeout):
	}
	var names []string
	for i := range stuck {
		if stuck[i].Load() {
			names = append(names, c.configs[i].Name)
		}
	}
	return fmt.Errorf("etcd members %v did not close in %v", names, readyTimeout)
}

// Endpoint is the client URL of member i.
func (c *Cluster) Endpoint(i int) string { return c.configs[i].AdvertiseClientUrls[0].String() }

// FreePort returns a loopback port free at the time of the call (see
// testserver.FreePort: below the kernel's ephemeral range).
func FreePort() (int, error) { return testserver.FreePort() }

func freeURL() (url.URL, error) {
	p, err := FreePort()
	if err != nil {
		return url.URL{}, err
	}
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(p))}, nil
}
