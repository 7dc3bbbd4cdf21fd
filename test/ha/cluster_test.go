package ha

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/test/internal/etcdcluster"
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
	shared = c
	code := m.Run()
	if err := c.stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// cluster is an etcd cluster of members and the miniapiserver replicas
// over it, each replica configured with every member's client URL.
type cluster struct {
	etcd *etcdcluster.Cluster
	// port is the secure port of every replica.
	port     int
	replicas []*testserver.TestServer
	clients  []kubernetes.Interface
}

// startCluster starts the etcd members and the replicas, with their data
// under dir.
func startCluster(dir string, opts ...testserver.Option) (*cluster, error) {
	ec, err := etcdcluster.Start(filepath.Join(dir, "etcd"), members)
	if err != nil {
		return nil, err
	}
	port, err := etcdcluster.FreePort()
	if err != nil {
		ec.Stop()
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
	opts = append([]testserver.Option{testserver.WithEtcd(c.etcd.ClientURLs()...), func(o *app.Options) {
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
func (c *cluster) stop() error {
	var wg sync.WaitGroup
	for _, r := range c.replicas {
		wg.Go(r.Server.Stop)
	}
	wg.Wait()
	return c.etcd.Stop()
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
