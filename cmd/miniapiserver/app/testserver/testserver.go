// Package testserver starts a complete miniapiserver inside a Go test: a
// free loopback port, its data (and embedded etcd) in t.TempDir(), stopped
// by t.Cleanup. It is public so that users' tests can do the same:
//
//	srv := testserver.Start(t)
//	client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
package testserver

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/authz"
)

// TestServer is a running server.
type TestServer struct {
	// ClientConfig reaches the server as its administrator.
	ClientConfig *rest.Config
	// URL is the HTTPS endpoint; Token the admin bearer token.
	URL   string
	Token string
	// Options the server was started with.
	Options *app.Options
	// Server is the running server (for its Stop, EtcdURL, ...).
	Server *app.Server
}

// Option changes the options of a test server before it starts.
type Option func(*app.Options)

// WithEtcd makes the server use an etcd started by the test (to stop and
// restart it, or the members of a cluster) instead of an embedded one of
// its own.
func WithEtcd(urls ...string) Option {
	return func(o *app.Options) { o.EtcdServers = urls }
}

// WithInsecurePort also serves plain HTTP without authentication on a free
// loopback port (TestServer.Server.InsecureURL).
func WithInsecurePort() Option {
	return func(o *app.Options) {
		port, err := FreePort()
		if err != nil {
			// No port at all: Start refuses -1 with a clear error
			// (0 would silently serve no plain HTTP).
			port = -1
		}
		o.InsecurePort = port
	}
}

// Start starts a server for the test and stops it at cleanup.
func Start(t testing.TB, opts ...Option) *TestServer {
	t.Helper()
	ts, err := New(t.TempDir(), opts...)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(ts.Server.Stop)
	return ts
}

// New starts a server with its data in dir, for suites that share one
// server from TestMain; the caller stops it with Server.Stop.
func New(dir string, opts ...Option) (*TestServer, error) {
	o := app.NewOptions()
	o.DataDir = dir
	o.SecurePort = 0
	o.EtcdUnsafeNoFsync = true
	o.EtcdCompactionInterval = 0
	o.LogLevel = "warn"
	for _, opt := range opts {
		opt(o)
	}
	s, err := app.Start(o)
	if err != nil {
		return nil, fmt.Errorf("starting miniapiserver: %w", err)
	}
	// Ready takes well under a second; the bound only keeps a broken
	// server from hanging a test, and is generous for a machine busy with
	// many test binaries under -race.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.WaitForReady(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("miniapiserver not ready: %w", err)
	}
	cfg := &rest.Config{
		Host:        s.SecureURL,
		BearerToken: s.AdminToken,
		// Tests make many requests at once: no client-side throttling.
		QPS:   -1,
		Burst: -1,
	}
	if s.CAPEM != nil {
		cfg.TLSClientConfig.CAData = s.CAPEM
	} else {
		cfg.TLSClientConfig.Insecure = true
	}
	return &TestServer{ClientConfig: cfg, URL: s.SecureURL, Token: s.AdminToken, Options: o, Server: s}, nil
}

// Main is the TestMain of a package whose tests share one server: it makes
// a scratch directory, starts the server with opts (its data in
// scratch/server), hands both to setup (which keeps the server for the
// tests and may use the scratch directory), runs the tests, stops the
// server, removes the directory and exits with the tests' code. Flags are
// parsed first, so setup sees the package's own.
//
//	var srv *testserver.TestServer
//	func TestMain(m *testing.M) {
//		testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
//	}
func Main(m *testing.M, setup func(ts *TestServer, scratch string), opts ...Option) {
	os.Exit(runMain(m, setup, opts))
}

func runMain(m *testing.M, setup func(*TestServer, string), opts []Option) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "miniapiserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ts, err := New(filepath.Join(dir, "server"), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer ts.Server.Stop()
	setup(ts, dir)
	return m.Run()
}

// HTTPClient returns a plain HTTP client that trusts the server, for tests
// that speak the REST API by hand; requests need the Authorization header
// (see Do).
func (ts *TestServer) HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	transport, err := rest.TransportFor(ts.ClientConfig)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return &http.Client{Transport: transport}
}

// ClientConfigFor returns a client configuration that authenticates as
// user name in groups, with a client certificate signed by the server's
// client CA (the server adds system:authenticated). The server must have
// generated its client CA (no --client-ca-file).
func (ts *TestServer) ClientConfigFor(t testing.TB, name string, groups ...string) *rest.Config {
	t.Helper()
	certPEM, keyPEM, err := ts.Server.ClientCA.Sign(name, groups, time.Hour)
	if err != nil {
		t.Fatalf("testserver: signing a certificate for %s: %v", name, err)
	}
	cfg := rest.AnonymousClientConfig(ts.ClientConfig)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg
}

// AnonymousClientConfig returns a client configuration without
// credentials (the server sees system:anonymous).
func (ts *TestServer) AnonymousClientConfig() *rest.Config {
	return rest.AnonymousClientConfig(ts.ClientConfig)
}

// WithAuthorizer adds a to the server's authorizers, after those of
// --authorization-mode (tests of what a user may do).
func WithAuthorizer(name string, a authorizer.Authorizer) Option {
	return func(o *app.Options) {
		o.Auth.ExtraAuthorizers = append(o.Auth.ExtraAuthorizers, authz.Named{Name: name, Authorizer: a})
	}
}
