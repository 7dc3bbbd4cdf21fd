// Command bench is miniapiserver's load tool. It speaks the Kubernetes REST
// API with plain net/http and encoding/json (no Kubernetes client library),
// so that the same figures can be taken from any server: miniapiserver with
// or without its watch cache, kube-apiserver itself, and (scenario
// raw-etcd, through the etcd client) etcd alone.
//
// Each scenario prints one JSON line with its parameters and results; the
// field names carry their units. See BENCHMARKS.md at the repository root.
//
//	go run ./hack/bench --server https://127.0.0.1:6443 --token-file DATA/admin-token \
//	    --insecure-skip-tls-verify --scenario all --count 500
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Config holds the flags.
type Config struct {
	Server         string
	Token          string
	TokenFile      string
	Insecure       bool
	CAFile         string
	CertFile       string
	KeyFile        string
	AllowRemote    bool
	HTTP1          bool
	Gzip           bool
	RequestTimeout time.Duration
	Protobuf       bool

	Namespace   string
	Count       int
	Size        int
	Concurrency int
	Duration    time.Duration
	MaxRequests int
	Repeats     int
	PageSize    int
	// CPUProfile is where the cluster scenario saves the server's CPU
	// profile of its steady phase ("": none).
	CPUProfile string

	Watchers     int
	Updates      int
	WatchObjects int

	Nodes            int
	PodsPerNode      int
	PodSize          int
	Informers        int
	ChurnPerSec      float64
	LeasePeriod      time.Duration
	NodeStatusPeriod time.Duration
	SkipCleanup      bool

	PID     int
	EtcdPID int

	Cmd         string
	CmdLog      string
	StartupIdle time.Duration
	StopTimeout time.Duration

	EtcdURL string

	// Deadline bounds every scenario's run time, whatever its counts.
	Deadline time.Duration
	Scenario string
	Out      string
	// Label tags every line (e.g. "mini-cache", "kube") for the history.
	Label string
}

var namespaceRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func defaultConfig() Config {
	return Config{
		RequestTimeout:   60 * time.Second,
		Namespace:        "bench",
		Count:            10000,
		Size:             1024,
		Concurrency:      16,
		Duration:         10 * time.Second,
		MaxRequests:      1_000_000,
		Repeats:          20,
		PageSize:         500,
		Watchers:         100,
		Updates:          1000,
		WatchObjects:     4,
		Nodes:            5000,
		PodsPerNode:      20,
		PodSize:          3500,
		Informers:        5,
		ChurnPerSec:      20,
		LeasePeriod:      10 * time.Second,
		NodeStatusPeriod: time.Minute,
		StartupIdle:      2 * time.Second,
		StopTimeout:      15 * time.Second,
		Deadline:         10 * time.Minute,
		Scenario:         "all",
	}
}

func (c *Config) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Server, "server", c.Server, "API server URL, https://host:port or http://host:port (loopback only unless --allow-remote).")
	fs.StringVar(&c.Token, "token", c.Token, "Bearer token.")
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "File holding the bearer token (instead of --token, which other users can see in ps).")
	fs.BoolVar(&c.Insecure, "insecure-skip-tls-verify", c.Insecure, "Do not verify the server's certificate.")
	fs.StringVar(&c.CAFile, "ca-file", c.CAFile, "PEM file of the CA that signed the server's certificate.")
	fs.StringVar(&c.CertFile, "cert-file", c.CertFile, "Client certificate (PEM) to authenticate with, instead of or beside a token.")
	fs.StringVar(&c.KeyFile, "key-file", c.KeyFile, "Private key (PEM) of --cert-file.")
	fs.BoolVar(&c.AllowRemote, "allow-remote", c.AllowRemote, "Allow --server and --etcd-url hosts that are not loopback.")
	fs.BoolVar(&c.HTTP1, "http1", c.HTTP1, "Use HTTP/1.1 even over TLS (default: HTTP/2 when the server offers it).")
	fs.BoolVar(&c.Gzip, "gzip", c.Gzip, "Accept gzip-compressed responses, as client-go does (default: uncompressed).")
	fs.BoolVar(&c.Protobuf, "protobuf", c.Protobuf, "Ask for lists in protobuf, as client-go's typed clients do (default: JSON); the tool checks them as JSON ones.")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "Timeout of each request (watches excepted).")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "Namespace of the benchmark's ConfigMaps (created if missing).")
	fs.IntVar(&c.Count, "count", c.Count, "create: how many ConfigMaps (bench-0 .. bench-<count-1>); get, list: how many to expect.")
	fs.IntVar(&c.Size, "size", c.Size, "Bytes of data in each ConfigMap (one key), and in each watch update.")
	fs.IntVar(&c.Concurrency, "concurrency", c.Concurrency, "Requests in flight (create, get, raw-etcd).")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "get: how long to send GETs; cluster: how long the steady phase (heartbeats, churn) lasts.")
	fs.IntVar(&c.MaxRequests, "max-requests", c.MaxRequests, "get: stop after this many GETs even if --duration has not passed.")
	fs.IntVar(&c.Repeats, "repeats", c.Repeats, "list: how many times to run each kind of LIST.")
	fs.IntVar(&c.PageSize, "page-size", c.PageSize, "list: limit of each page of the paginated LIST.")
	fs.IntVar(&c.Watchers, "watchers", c.Watchers, "watch: how many watches to open.")
	fs.IntVar(&c.Updates, "updates", c.Updates, "watch: how many updates to send, in total.")
	fs.IntVar(&c.WatchObjects, "watch-objects", c.WatchObjects, "watch: over how many ConfigMaps (bench-watch-<k>) the updates are spread, one writer each.")
	fs.IntVar(&c.Nodes, "nodes", c.Nodes, "cluster: how many nodes (kubelets: a lease, status heartbeats, a watch of their pods).")
	fs.IntVar(&c.PodsPerNode, "pods-per-node", c.PodsPerNode, "cluster: pods bound to each node.")
	fs.IntVar(&c.PodSize, "pod-size", c.PodSize, "cluster: approximate bytes of each pod's JSON.")
	fs.IntVar(&c.Informers, "informers", c.Informers, "cluster: all-pods informers (paged LIST, then WATCH).")
	fs.BoolVar(&c.SkipCleanup, "skip-cleanup", c.SkipCleanup, "cluster: leave the nodes, leases and pods in place at the end (for a server whose etcd is thrown away after the run: deleting 100,000 pods takes minutes).")
	fs.Float64Var(&c.ChurnPerSec, "churn-per-sec", c.ChurnPerSec, "cluster: pods deleted (and replaced) per second during --duration.")
	fs.DurationVar(&c.LeasePeriod, "lease-period", c.LeasePeriod, "cluster: how often each node renews its lease.")
	fs.DurationVar(&c.NodeStatusPeriod, "node-status-period", c.NodeStatusPeriod, "cluster: how often each node patches its status.")
	fs.IntVar(&c.PID, "pid", c.PID, "memory, cluster, watch: PID of the server, for its RSS and CPU.")
	fs.IntVar(&c.EtcdPID, "etcd-pid", c.EtcdPID, "memory, cluster, watch: PID of etcd (optional), for its RSS and CPU.")
	fs.StringVar(&c.Cmd, "cmd", c.Cmd, "startup: command that starts the server, run with sh -c.")
	fs.StringVar(&c.CmdLog, "cmd-log", c.CmdLog, "startup: file for the command's output (default: a new temporary file).")
	fs.DurationVar(&c.StartupIdle, "startup-idle", c.StartupIdle, "startup: how long to wait after ready before reading RSS.")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", c.StopTimeout, "startup: how long to wait after SIGTERM before SIGKILL.")
	fs.StringVar(&c.EtcdURL, "etcd-url", c.EtcdURL, "raw-etcd: etcd client URL (http://host:port, loopback only unless --allow-remote).")
	fs.DurationVar(&c.Deadline, "deadline", c.Deadline, "Upper bound on each scenario's run time.")
	fs.StringVar(&c.Scenario, "scenario", c.Scenario, "One of: "+strings.Join(scenarioNames(), ", ")+".")
	fs.StringVar(&c.Out, "out", c.Out, "Also append the result lines to this file.")
	fs.StringVar(&c.CPUProfile, "cpu-profile", c.CPUProfile, "cluster: save the server's CPU profile of the steady phase (GET /debug/pprof/profile; miniapiserver needs --profiling) to this file, and its heap profile at the phase's end to this file.heap.")
	fs.StringVar(&c.Label, "label", c.Label, "A tag copied into every line's params (which server, which setup).")
}

func (c *Config) validate() error {
	if _, ok := scenarios[c.Scenario]; !ok && c.Scenario != "all" {
		return fmt.Errorf("--scenario: %q is not one of %s", c.Scenario, strings.Join(scenarioNames(), ", "))
	}
	for name, v := range map[string]int{"--count": c.Count, "--concurrency": c.Concurrency, "--repeats": c.Repeats,
		"--watchers": c.Watchers, "--updates": c.Updates, "--watch-objects": c.WatchObjects, "--max-requests": c.MaxRequests, "--page-size": c.PageSize,
		"--nodes": c.Nodes, "--pods-per-node": c.PodsPerNode, "--informers": c.Informers} {
		if v <= 0 {
			return fmt.Errorf("%s: must be positive", name)
		}
	}
	if c.ChurnPerSec < 0 || c.PodSize < 0 || c.LeasePeriod <= 0 || c.NodeStatusPeriod <= 0 {
		return fmt.Errorf("--churn-per-sec, --pod-size: must not be negative; --lease-period, --node-status-period: must be positive")
	}
	if c.Size < 0 {
		return fmt.Errorf("--size: must not be negative")
	}
	if c.Deadline <= 0 || c.Duration <= 0 {
		return fmt.Errorf("--deadline and --duration: must be positive")
	}
	if c.TokenFile != "" {
		if c.Token != "" {
			return fmt.Errorf("--token and --token-file: set one")
		}
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return fmt.Errorf("--token-file: %w", err)
		}
		c.Token = strings.TrimSpace(string(b))
	}
	if !namespaceRE.MatchString(c.Namespace) {
		return fmt.Errorf("--namespace: %q is not a namespace name (a DNS label)", c.Namespace)
	}
	switch c.Scenario {
	case "raw-etcd", "memory":
	case "cleanup":
		if c.Server == "" && c.EtcdURL == "" {
			return fmt.Errorf("--server or --etcd-url: cleanup needs at least one")
		}
	default:
		if c.Server == "" {
			return fmt.Errorf("--server: required for scenario %s", c.Scenario)
		}
	}
	return nil
}

// scenario runs one measurement and returns its result lines (one, but
// raw-etcd, which mirrors create, get and list).
type scenario func(ctx context.Context, b *Bench) ([]Result, error)

var scenarios = map[string]scenario{
	"startup":  one(runStartup),
	"create":   one(runCreate),
	"get":      one(runGet),
	"list":     one(runList),
	"watch":    one(runWatch),
	"memory":   one(runMemory),
	"raw-etcd": runRawEtcd,
	"cleanup":  one(runCleanup),
	"cluster":  one(runCluster),
}

// allScenarios is what --scenario all runs, in order; memory is skipped
// without --pid.
var allScenarios = []string{"create", "get", "list", "watch", "memory"}

func scenarioNames() []string {
	names := []string{"all"}
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func one(f func(ctx context.Context, b *Bench) (Result, error)) scenario {
	return func(ctx context.Context, b *Bench) ([]Result, error) {
		r, err := f(ctx, b)
		if err != nil {
			return nil, err
		}
		return []Result{r}, nil
	}
}

// Bench is a configured run: the flags and, built on first use, the client.
type Bench struct {
	Config
	client *Client
	// started is when the current scenario started (the time of its line).
	started time.Time
}

// Client returns the API client, building it on first use.
func (b *Bench) Client() (*Client, error) {
	if b.client != nil {
		return b.client, nil
	}
	c, err := NewClient(ClientOptions{
		Server: b.Server, Token: b.Token, Insecure: b.Insecure, CAFile: b.CAFile, CertFile: b.CertFile, KeyFile: b.KeyFile, AllowRemote: b.AllowRemote,
		IdleConns: b.Concurrency + b.Watchers + 4, HTTP1: b.HTTP1, Gzip: b.Gzip, RequestTimeout: b.RequestTimeout,
		ListProtobuf: b.Protobuf,
	})
	if err != nil {
		return nil, err
	}
	b.client = c
	return c, nil
}

// result starts a result line for scenario, timed at the scenario's start,
// with the parameters every line carries.
func (b *Bench) result(scenario string, params Fields) Result {
	p := Fields{"namespace": b.Namespace, "http1": b.HTTP1, "gzip": b.Gzip, "protobuf": b.Protobuf}
	if b.Label != "" {
		p["label"] = b.Label
	}
	p.add(params)
	t := b.started
	if t.IsZero() {
		t = time.Now()
	}
	return Result{Scenario: scenario, Server: b.Server, Time: t, Params: p, Fields: Fields{}}
}

// Run runs one scenario (or all) and writes each result line to out as it
// comes.
func (b *Bench) Run(ctx context.Context, name string, out io.Writer) error {
	names := []string{name}
	if name == "all" {
		names = allScenarios
	}
	for _, n := range names {
		if name == "all" && n == "memory" && b.PID == 0 {
			fmt.Fprintln(os.Stderr, "bench: skipping memory: no --pid")
			continue
		}
		b.started = time.Now()
		sctx, cancel := context.WithTimeout(ctx, b.Deadline)
		results, err := scenarios[n](sctx, b)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		for _, r := range results {
			line, err := r.Line()
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			if _, err := out.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

func main() {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	cfg.addFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() > 0 {
		fail(fmt.Errorf("unexpected arguments: %v", fs.Args()))
	}
	if err := cfg.validate(); err != nil {
		fail(err)
	}
	var out io.Writer = os.Stdout
	if cfg.Out != "" {
		f, err := os.OpenFile(cfg.Out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fail(fmt.Errorf("--out: %w", err))
		}
		defer f.Close()
		out = io.MultiWriter(os.Stdout, f)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := &Bench{Config: cfg}
	if err := b.Run(ctx, cfg.Scenario, out); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (--deadline %s)", err, cfg.Deadline)
		}
		stop()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
