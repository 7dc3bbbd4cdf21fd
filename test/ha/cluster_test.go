package ha

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// serviceRange is the service CIDR of the shared cluster's replicas.
const serviceRange = "10.96.0.0/26"

// members and replicas of the clusters the tests start.
const (
	members  = 3
	replicas = 3
)

// shared is the cluster the tests of this package share (those that do not
// inject faults); started by TestMain.
var shared *cluster

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "miniapiserver-ha-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	c, err := startCluster(dir, testserver.Option(func(o *app.Options) {
		// 62 usable addresses: concurrent creates through every replica
		// often pick the same one (TestAllocatorsAcrossReplicas).
		o.ServiceClusterIPRange = serviceRange
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.stop()
	shared = c
	return m.Run()
}

// cluster is an etcd cluster of members and the miniapiserver replicas
// over it, each replica configured with every member's client URL.
type cluster struct {
	etcd *etcdCluster
	// port is the secure port of every replica.
	port     int
	replicas []*testserver.TestServer
	clients  []kubernetes.Interface
}

// startCluster starts the etcd members and the replicas, with their data
// under dir.
func startCluster(dir string, opts ...testserver.Option) (*cluster, error) {
	ec, err := startEtcdCluster(filepath.Join(dir, "etcd"), members)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		ec.stop()
		return nil, err
	}
	c := &cluster{etcd: ec, port: port}
	for i := range replicas {
		ts, client, err := c.startReplica(filepath.Join(dir, "replica-"+strconv.Itoa(i)), i, opts...)
		if err != nil {
			c.stop()
			return nil, fmt.Errorf("replica %d: %w", i, err)
		}
		c.replicas = append(c.replicas, ts)
		c.clients = append(c.clients, client)
	}
	return c, nil
}

// startReplica starts replica i: it listens on 127.0.0.<i+1> at the
// cluster's port, as replicas on hosts of their own would (the kubernetes
// Service's endpoints list addresses on one port), and advertises
// 10.200.0.<i+1> (endpoints may not list loopback addresses).
func (c *cluster) startReplica(dir string, i int, opts ...testserver.Option) (*testserver.TestServer, kubernetes.Interface, error) {
	opts = append([]testserver.Option{testserver.WithEtcd(c.etcd.clientURLs()...), func(o *app.Options) {
		o.BindAddress = replicaAddress(i)
		o.SecurePort = c.port
		o.AdvertiseAddress = advertisedAddress(i)
		o.EndpointReconcilerTTL, o.EndpointReconcilerInterval = 3*time.Second, time.Second
	}}, opts...)
	ts, err := testserver.New(dir, opts...)
	if err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(ts.ClientConfig)
	if err != nil {
		ts.Server.Stop()
		return nil, nil, err
	}
	return ts, client, nil
}

func replicaAddress(i int) string    { return "127.0.0." + strconv.Itoa(i+1) }
func advertisedAddress(i int) string { return "10.200.0." + strconv.Itoa(i+1) }

// stop stops the replicas, then the etcd members.
func (c *cluster) stop() {
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Go(r.Server.Stop)
	}
	wg.Wait()
	c.etcd.stop()
}

// etcdCluster is a cluster of etcd members inside this process, each on
// its own loopback ports and data dir.
type etcdCluster struct {
	members []*embed.Etcd
	mu      sync.Mutex
	killed  []chan struct{} // closed when a killed member is closed
}

func startEtcdCluster(dir string, n int) (*etcdCluster, error) {
	names := make([]string, n)
	clientURLs := make([]url.URL, n)
	peerURLs := make([]url.URL, n)
	var initial []string
	for i := range n {
		names[i] = "m" + strconv.Itoa(i)
		cp, err := freePort()
		if err != nil {
			return nil, err
		}
		pp, err := freePort()
		if err != nil {
			return nil, err
		}
		clientURLs[i] = url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(cp))}
		peerURLs[i] = url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(pp))}
		initial = append(initial, names[i]+"="+peerURLs[i].String())
	}
	ec := &etcdCluster{}
	for i := range n {
		cfg := embed.NewConfig()
		cfg.Name = names[i]
		cfg.Dir = filepath.Join(dir, names[i])
		cfg.UnsafeNoFsync = true
		cfg.LogLevel = "error"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURLs[i]}, []url.URL{clientURLs[i]}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURLs[i]}, []url.URL{peerURLs[i]}
		cfg.ListenMetricsUrls = nil
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = "miniapiserver-ha-test"
		cfg.ClusterState = embed.ClusterStateFlagNew
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			ec.stop()
			return nil, fmt.Errorf("etcd member %s: %w", names[i], err)
		}
		ec.members = append(ec.members, e)
	}
	timeout := time.After(time.Minute)
	for _, e := range ec.members {
		select {
		case <-e.Server.ReadyNotify():
		case err := <-e.Err():
			ec.stop()
			return nil, fmt.Errorf("etcd member %s: %w", e.Config().Name, err)
		case <-timeout:
			ec.stop()
			return nil, errors.New("the etcd cluster did not become ready in a minute")
		}
	}
	return ec, nil
}

func (ec *etcdCluster) clientURLs() []string {
	var urls []string
	for _, e := range ec.members {
		urls = append(urls, e.Config().AdvertiseClientUrls[0].String())
	}
	return urls
}

// leader returns the index of the member that is leader, or -1.
func (ec *etcdCluster) leader() int {
	for i, e := range ec.members {
		if e.Server.Leader() == e.Server.MemberID() && e.Server.Leader() != 0 {
			select {
			case <-e.Server.StopNotify():
				continue
			default:
				return i
			}
		}
	}
	return -1
}

// kill stops member i as a crash would: its raft node stops at once,
// without handing leadership over; its listeners close in the background.
func (ec *etcdCluster) kill(i int) {
	e := ec.members[i]
	e.Server.HardStop()
	done := make(chan struct{})
	ec.mu.Lock()
	ec.killed = append(ec.killed, done)
	ec.mu.Unlock()
	go func() {
		defer close(done)
		e.Close()
	}()
}

func (ec *etcdCluster) stop() {
	var wg sync.WaitGroup
	ec.mu.Lock()
	for _, done := range ec.killed {
		wg.Go(func() { <-done })
	}
	ec.mu.Unlock()
	for _, e := range ec.members {
		select {
		case <-e.Server.StopNotify():
		default:
			wg.Go(e.Close)
		}
	}
	wg.Wait()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// createNamespace creates a namespace for t through the first replica.
func (c *cluster) createNamespace(t *testing.T) string {
	t.Helper()
	return c.replicas[0].CreateNamespace(t)
}

// ctx is a test's context, bounded.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
