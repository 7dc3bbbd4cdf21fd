package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/healthz"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/garbagecollector"
	"github.com/miniapiserver/miniapiserver/pkg/embedetcd"
	"github.com/miniapiserver/miniapiserver/pkg/metrics"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
)

// Server is a running miniapiserver.
type Server struct {
	// SecureURL is the HTTPS endpoint (https://host:port).
	SecureURL string
	// InsecureURL is the plain HTTP endpoint, when --insecure-port is set.
	InsecureURL string
	// AdminToken is the generated admin token ("" with --token-auth-file).
	AdminToken string
	// ClientCA verifies client certificates; it signs new ones unless it
	// came from --client-ca-file.
	ClientCA *ClientCA
	// CAPEM is the certificate clients trust (nil with --tls-cert-file).
	CAPEM []byte
	// KubeconfigPath is the generated admin kubeconfig ("" when the server
	// holds no admin credential: --client-ca-file and --token-auth-file).
	KubeconfigPath string
	// EtcdURL is the etcd the server uses (the embedded one's, or the first
	// of --etcd-servers), and EtcdTLS the TLS client configuration it
	// reaches it with (nil: plain HTTP).
	EtcdURL string
	EtcdTLS *tls.Config
	// EtcdTLSFiles are the client certificate, key and CA of the embedded
	// etcd (zero with --etcd-servers).
	EtcdTLSFiles embedetcd.TLSFiles
	// GarbageCollector is the ownerReference garbage collector, when
	// --controllers runs it (tests wait on its graph, as kube's
	// integration tests do).
	GarbageCollector *garbagecollector.Controller

	readyChecks []healthz.Check
	// metrics is the server's metrics registry, which its parts record
	// in and its /metrics serves: servers in one process count apart.
	metrics *prometheus.Registry
	// etcdSizes reports the size of the server's etcds in metrics.
	etcdSizes *etcd3.SizeCollector
	// shuttingDown fails /readyz from the start of a shutdown.
	shuttingDown  atomic.Bool
	shutdownDelay time.Duration

	// loops are the server's background loops and the goroutines that
	// serve; their ctx is the server's lifetime. preShutdown are those
	// stopped first at a shutdown (the endpoint reconciler: kube's
	// pre-shutdown hook), within it.
	loops, preShutdown *loops
	errs               chan error
	stopOnce           sync.Once
	cleanup            []func() // in reverse order of start
}

// Start starts a server with options o and returns once it serves. Stop
// it with Stop. It builds the server part by part, each from the parts
// before it.
func Start(o *Options) (*Server, error) {
	s, err := newServer(o)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.runCleanup()
		}
	}()
	creds, err := loadCredentials(o)
	if err != nil {
		return nil, err
	}
	s.CAPEM, s.ClientCA, s.AdminToken = creds.caPEM, creds.clientCA, creds.adminToken
	storage, err := s.buildStorage(o)
	if err != nil {
		return nil, err
	}
	groups, err := s.buildGroups(o, creds, storage)
	if err != nil {
		return nil, err
	}
	adm, err := buildAdmission(o, groups, s.metrics)
	if err != nil {
		return nil, err
	}
	h, err := s.buildHandler(o, creds, storage, groups, adm)
	if err != nil {
		return nil, err
	}
	if err := s.startLoops(o, creds, storage, groups, adm, h); err != nil {
		return nil, err
	}
	if err := s.serve(o, creds, h); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// newServer is a server of o that has started nothing yet.
func newServer(o *Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	s := &Server{errs: make(chan error, 2), shutdownDelay: o.ShutdownDelayDuration, loops: newLoops(context.Background()),
		metrics: metrics.New()}
	s.etcdSizes = etcd3.NewSizeCollector(s.metrics)
	s.preShutdown = newLoops(s.loops.ctx)
	return s, nil
}

// embeddedEtcdDir is where the embedded etcd of a data dir keeps its data.
func embeddedEtcdDir(dataDir string) string { return filepath.Join(dataDir, "etcd") }

// Stop shuts the server down gracefully, as kube-apiserver does: /readyz
// fails at once while every request is still served for the shutdown
// delay; then the server stops accepting requests, watches end (their
// streams closed cleanly, so clients watch again elsewhere) and the
// requests in flight get the shutdown timeout to finish. The storage, the
// etcd client and the embedded etcd are released last, in that order.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		s.shuttingDown.Store(true)
		s.preShutdown.stop()
		if s.shutdownDelay > 0 {
			slog.Info("miniapiserver: /readyz fails; serving on for the shutdown delay", "delay", s.shutdownDelay)
			time.Sleep(s.shutdownDelay)
		}
		s.stopLoops()
		s.runCleanup()
	})
}

// WaitForReady waits until the readiness checks of /readyz pass (the watch
// caches have their first lists), or ctx ends.
func (s *Server) WaitForReady(ctx context.Context) error {
	ticker := time.NewTicker(5 * time.Millisecond)
	defer ticker.Stop()
	for {
		ready := true
		for _, c := range s.readyChecks {
			if c.Fn(ctx) != nil {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// Err returns a channel that receives a serving error, if serving fails.
func (s *Server) Err() <-chan error { return s.errs }

func (s *Server) runCleanup() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
	s.cleanup = nil
}

// shutdownCheck fails from the start of a shutdown, as kube's "shutdown".
func (s *Server) shutdownCheck() healthz.Check {
	return healthz.Check{Name: "shutdown", Fn: func(context.Context) error {
		if s.shuttingDown.Load() {
			return errors.New("the server is shutting down")
		}
		return nil
	}}
}

// Run runs a server with options o until ctx ends, printing where to find
// it on out.
func Run(ctx context.Context, o *Options, out io.Writer) error {
	start := time.Now()
	s, err := Start(o)
	if err != nil {
		return err
	}
	defer s.Stop()
	if err := s.WaitForReady(ctx); err != nil {
		return nil // interrupted while starting
	}
	// Starting allocates several times the heap that stays live (package
	// initialisers, schemas, the first list of every watch cache): give
	// the garbage back to the system now rather than hold it as idle heap
	// until the scavenger gets to it (~4 MiB of idle RSS, and that memory
	// is private to each instance).
	debug.FreeOSMemory()
	slog.Info("miniapiserver is ready", "url", s.SecureURL, "etcd", s.EtcdURL, "startup", time.Since(start).Round(time.Millisecond))
	if s.KubeconfigPath != "" {
		abs, _ := filepath.Abs(s.KubeconfigPath)
		fmt.Fprintf(out, "kubeconfig: %s\n  kubectl --kubeconfig %s get namespaces\n", abs, abs)
	}
	if f := s.EtcdTLSFiles; f != (embedetcd.TLSFiles{}) {
		// The embedded etcd takes only clients with its certificate.
		fmt.Fprintf(out, "etcd: %s\n  etcdctl --endpoints %s --cacert %s --cert %s --key %s endpoint status\n",
			s.EtcdURL, s.EtcdURL, absPath(f.CAFile), absPath(f.CertFile), absPath(f.KeyFile))
	}
	if s.InsecureURL != "" {
		fmt.Fprintf(out, "insecure (no authentication): %s\n", s.InsecureURL)
	}
	select {
	case <-ctx.Done():
		slog.Info("miniapiserver is shutting down")
		return nil
	case err := <-s.Err():
		return err
	}
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
