// Package etcdtest starts a real embedded etcd for a test: free loopback
// ports, data in t.TempDir(), stopped by t.Cleanup. Tests never mock etcd.
package etcdtest

import (
	"context"
	"go.uber.org/goleak"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
)

// Etcd is an embedded etcd started for one test.
type Etcd struct {
	t      testing.TB
	dir    string
	server *embedetcd.Server
	// Client is connected to the server; closed at cleanup.
	Client *clientv3.Client
}

// Start starts an etcd that lives until the end of the test.
func Start(t testing.TB) *Etcd {
	t.Helper()
	e := &Etcd{t: t, dir: t.TempDir()}
	e.start()
	client, err := NewClient(e.server.ClientURL())
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	e.Client = client
	t.Cleanup(func() {
		client.Close()
		if e.server != nil {
			e.server.Stop()
		}
	})
	return e
}

func (e *Etcd) start() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := embedetcd.Start(ctx, embedetcd.Config{Dir: e.dir, UnsafeNoFsync: true, LogLevel: "fatal"})
	if err != nil {
		e.t.Fatalf("etcdtest: %v", err)
	}
	e.server = s
}

// URL is the client URL of the server.
func (e *Etcd) URL() string { return e.server.ClientURL() }

// Stop stops the server (clients see it as down) until Restart.
func (e *Etcd) Stop() {
	e.server.Stop()
	e.server = nil
}

// Restart starts a stopped server again, on the same data and port.
func (e *Etcd) Restart() {
	e.t.Helper()
	e.start()
}

// Compact compacts the store's history up to rev.
func (e *Etcd) Compact(rev int64) {
	e.t.Helper()
	if _, err := e.Client.Compact(context.Background(), rev, clientv3.WithCompactPhysical()); err != nil {
		e.t.Fatalf("etcdtest: compact %d: %v", rev, err)
	}
}

// NewClient returns a client of the etcd at url, with the timeouts the
// server itself uses.
func NewClient(url string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{url},
		DialTimeout: 10 * time.Second,
		Logger:      nopLogger(),
	})
}

// IgnoredGoroutines lists goroutines that outlive a stopped etcd by design
// (package-level loggers and gRPC's background workers), for goleak.
func IgnoredGoroutines() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		goleak.IgnoreAnyFunction("go.etcd.io/etcd/client/pkg/v3/logutil.(*MergeLogger).outputLoop"),
	}
}
