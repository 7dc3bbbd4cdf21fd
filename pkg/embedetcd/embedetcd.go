// Package embedetcd runs an etcd member inside this process
// (go.etcd.io/etcd/server/v3/embed). Alone (the default store of
// miniapiserver without --etcd-servers, and the etcd of every test) it
// listens on loopback only: over TLS with client certificates when given
// ClientTLS (loopback is not private: any local user could otherwise
// read and write every key), in the clear otherwise (tests). With a Cluster configuration it is one member
// of an etcd cluster whose other members are the embedded etcds of other
// servers (see cluster.go), speaking TLS to them. It sits beside the
// layers: only cmd and tests import it.
package embedetcd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Config of an embedded etcd.
type Config struct {
	// Dir holds etcd's data; created if missing.
	Dir string
	// ClientPort is the loopback port clients connect to; 0 picks a free
	// one. The port chosen is remembered in Dir, so a restarted server
	// (and anything that saved the URL) finds etcd at the same place.
	ClientPort int
	// UnsafeNoFsync skips fsync: for tests, never for data you keep.
	UnsafeNoFsync bool
	// QuotaBackendBytes is the space quota of the database: past it etcd
	// raises its NOSPACE alarm and refuses writes. 0: etcd's default
	// (2 GiB).
	QuotaBackendBytes int64
	// LogLevel of etcd's own log ("error" when empty).
	LogLevel string
	// StartTimeout bounds the wait for etcd to become ready (30 s when 0;
	// 5 min for a member of a cluster, which waits for a quorum).
	StartTimeout time.Duration
	// Cluster makes etcd a member of a cluster of embedded etcds (nil: a
	// cluster of one on loopback).
	Cluster *Cluster
	// ClientTLS makes the loopback client URL (and, alone, the peer URL:
	// it too takes writes, as raft messages and snapshots) https, serving
	// CertFile and requiring client certificates signed by CAFile; the
	// same certificate, if valid as a client's, connects to it. nil: plain
	// HTTP. A member of a Cluster serves every URL with the cluster's
	// TLS: ClientTLS, if set, must be the cluster's.
	ClientTLS *TLSFiles
}

// memberName is the name of the one member; the data dir layout is
// Dir/member-data (etcd's) and Dir/ports (the ports chosen).
const memberName = "miniapiserver"

func memberDir(dir string) string { return filepath.Join(dir, "member-data") }

func portsFile(dir string) string { return filepath.Join(dir, "ports") }

// Server is a running embedded etcd.
type Server struct {
	etcd      *embed.Etcd
	clientURL string
	clientTLS TLSFiles
	stopping  chan struct{}
	failed    chan error
}

// portAttempts bounds how often Start picks new free ports after etcd
// found one taken.
const portAttempts = 5

// Start starts etcd and returns once it serves clients: for a member of
// a cluster, once it has joined the cluster as a voting member.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, cfg)
		// A port found free is free only until someone else binds it:
		// another process (parallel test binaries, on CI) may take it
		// before etcd listens. Ports this process picked can be picked
		// again; etcd fails to listen before it writes any data.
		if err == nil || cfg.ClientPort != 0 || attempt == portAttempts || !errors.Is(err, syscall.EADDRINUSE) {
			return s, err
		}
		if rmErr := os.Remove(portsFile(cfg.Dir)); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			return nil, fmt.Errorf("embedetcd: %w", rmErr)
		}
	}
}

func start(ctx context.Context, cfg Config) (*Server, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedetcd: %w", err)
	}
	clientPort, peerPort, err := ports(cfg)
	if err != nil {
		return nil, err
	}
	ec, clientURL := etcdConfig(cfg, clientPort, peerPort)
	timeout := cfg.StartTimeout
	if cfg.Cluster != nil {
		if timeout == 0 {
			timeout = 5 * time.Minute
		}
		if cfg.ClientTLS != nil && *cfg.ClientTLS != cfg.Cluster.TLS {
			return nil, errors.New("embedetcd: a member of a cluster serves its clients with the cluster's TLS files, not others")
		}
		if err := cfg.Cluster.configure(ctx, ec, cfg.Dir); err != nil {
			return nil, err
		}
	} else if timeout == 0 {
		timeout = 30 * time.Second
	}
	if err := checkName(cfg.Dir, ec.Name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := startEtcd(ctx, ec, cfg.Dir)
	if err != nil {
		return nil, err
	}
	if cfg.Cluster != nil {
		if err := promote(ctx, e); err != nil {
			e.Close()
			return nil, err
		}
	}
	s := &Server{etcd: e, clientURL: clientURL, stopping: make(chan struct{}), failed: make(chan error, 1)}
	if cfg.ClientTLS != nil {
		s.clientTLS = *cfg.ClientTLS
	}
	if err := writeRecord(cfg.Dir, e, s.clientURL, s.clientTLS); err != nil {
		e.Close()
		return nil, err
	}
	go s.watchStop()
	return s, nil
}

// etcdConfig is the configuration of the one member, listening on
// 127.0.0.1 at the ports given, and the URL its clients reach it at.
func etcdConfig(cfg Config, clientPort, peerPort int) (*embed.Config, string) {
	ec := embed.NewConfig()
	ec.Name = memberName
	ec.Dir = memberDir(cfg.Dir)
	ec.UnsafeNoFsync = cfg.UnsafeNoFsync
	ec.QuotaBackendBytes = cfg.QuotaBackendBytes
	ec.LogLevel = cfg.LogLevel
	if ec.LogLevel == "" {
		ec.LogLevel = "error"
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(quietLogger(ec.LogLevel))
	scheme := "http"
	if cfg.ClientTLS != nil {
		scheme = "https"
		ec.ClientTLSInfo, ec.PeerTLSInfo = cfg.ClientTLS.info(), cfg.ClientTLS.info()
	}
	cu := url.URL{Scheme: scheme, Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	pu := url.URL{Scheme: scheme, Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	// One member has no peer to hear from: a short election timeout costs
	// nothing and makes it leader (and etcd ready) in tens of milliseconds
	// instead of about a second (defaults: 100 ms ticks, 1 s elections).
	ec.TickMs, ec.ElectionMs = 10, 100
	if cfg.Cluster == nil {
		// etcd keeps the raft log's last SnapshotCatchUpEntries entries in
		// memory (5,000 by default, each with the object written) so that
		// a slow follower can catch up without a snapshot. A lone member
		// has no follower: 100 entries keep the log to ~200 (etcd compacts
		// it every 100 applies) instead of ~5,100, about 10 MB of heap
		// after a few thousand writes of 2 KiB objects. Members of a
		// cluster keep etcd's default, for their followers.
		ec.SnapshotCatchUpEntries = 100
	}
	// No metrics or pprof endpoints of etcd's own.
	ec.ListenMetricsUrls = nil
	return ec, cu.String()
}

// startEtcd starts etcd with ec and waits until it is ready: it has
// published itself to the cluster, which takes a quorum.
func startEtcd(ctx context.Context, ec *embed.Config, dir string) (*embed.Etcd, error) {
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("embedetcd: starting etcd in %s: %w", dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedetcd: %w", err)
	case <-e.Server.StopNotify():
		e.Close()
		return nil, fmt.Errorf("embedetcd: etcd in %s stopped while starting (see its log above)", dir)
	case <-ctx.Done():
		e.Close()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, errors.New("embedetcd: etcd did not become ready in time (a member of a cluster waits for a quorum of its members)")
		}
		return nil, ctx.Err()
	}
}

// watchStop reports on failed an etcd that stops other than by Stop (a
// member removed from its cluster stops itself), and closes it.
func (s *Server) watchStop() {
	defer close(s.failed)
	select {
	case <-s.stopping:
	case <-s.etcd.Server.StopNotify():
		select {
		case <-s.stopping:
		default:
			s.failed <- errors.New("embedetcd: etcd stopped (was this member removed from its cluster?)")
		}
	case err := <-s.etcd.Err():
		s.failed <- fmt.Errorf("embedetcd: %w", err)
	}
}

// Failed receives an error when etcd stops on its own or fails to serve;
// it is closed once etcd stops.
func (s *Server) Failed() <-chan error { return s.failed }

// ClientURL is the URL clients connect to.
func (s *Server) ClientURL() string { return s.clientURL }

// ClientTLS are the files a client connects with (Config.ClientTLS; zero
// for plain HTTP).
func (s *Server) ClientTLS() TLSFiles { return s.clientTLS }

// Stop stops etcd and waits until it has released its data directory.
func (s *Server) Stop() {
	close(s.stopping)
	s.etcd.Close()
}

// ports returns the client and peer ports: the ones remembered in the data
// dir, the configured client port, or free ones.
func ports(cfg Config) (int, int, error) {
	if cfg.ClientPort == 0 {
		if c, p, err := readPorts(cfg.Dir); err == nil && free(c) && free(p) {
			return c, p, nil
		}
	}
	client := cfg.ClientPort
	if client == 0 {
		var err error
		if client, err = freePort(); err != nil {
			return 0, 0, err
		}
	}
	peer, err := freePort()
	if err != nil {
		return 0, 0, err
	}
	if err := writePorts(cfg.Dir, client, peer); err != nil {
		return 0, 0, err
	}
	return client, peer, nil
}

// readPorts returns the client and peer ports remembered in dir.
func readPorts(dir string) (client, peer int, err error) {
	data, err := os.ReadFile(portsFile(dir))
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(string(data)), "%d %d", &client, &peer); err != nil {
		return 0, 0, fmt.Errorf("embedetcd: %s: %w", portsFile(dir), err)
	}
	return client, peer, nil
}

func writePorts(dir string, client, peer int) error {
	if err := os.WriteFile(portsFile(dir), []byte(fmt.Sprintf("%d %d\n", client, peer)), 0o600); err != nil {
		return fmt.Errorf("embedetcd: %w", err)
	}
	return nil
}

// freePort is a variable so that a test can hand out a taken port.
var freePort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("embedetcd: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func free(port int) bool {
	if port <= 0 {
		return false
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// quietLogger keeps etcd's log to warnings and errors on stderr: its info
// lines would drown the server's own.
func quietLogger(level string) *zap.Logger {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		lvl = zapcore.ErrorLevel
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), lvl)
	return zap.New(noiseFilter{core})
}

// noiseFilter drops errors etcd logs that are not failures: about its
// own listeners when it is closed on purpose ("setting up serving from
// embedded etcd failed ... server closed"); on a brand new member, the
// storage version check that runs before the first term is written (it
// is retried and succeeds); and, on the leader of a cluster, the refusal
// to promote a member that is not a learner (every member of a cluster
// asks to be promoted when it starts, see promote).
type noiseFilter struct{ zapcore.Core }

var noise = map[string]bool{
	"setting up serving from embedded etcd failed.": true,
	"failed to update storage version":              true,
	"Validation on configuration change failed":     true,
}

func (f noiseFilter) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if noise[e.Message] {
		return ce
	}
	return f.Core.Check(e, ce)
}

func (f noiseFilter) With(fields []zapcore.Field) zapcore.Core {
	return noiseFilter{f.Core.With(fields)}
}
