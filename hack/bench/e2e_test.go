package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// fakeServerEnv makes the test binary a stand-in server for the startup
// scenario: it listens on the address after a short delay, answers
// /readyz with 200 to the right token, and on SIGTERM takes a while to
// shut down, then writes the file named by fakeServerMarkEnv and exits.
const (
	fakeServerEnv     = "BENCH_FAKE_SERVER_ADDR"
	fakeServerMarkEnv = "BENCH_FAKE_SERVER_MARK"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(fakeServerEnv); addr != "" {
		os.Exit(fakeServer(addr))
	}
	goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...)
}

func fakeServer(addr string) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond) // "starting up"
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fake-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	})
	go func() { _ = http.Serve(l, mux) }()
	<-term
	time.Sleep(300 * time.Millisecond)
	if err := os.WriteFile(os.Getenv(fakeServerMarkEnv), []byte("stopped"), 0o600); err != nil {
		return 1
	}
	return 0
}

// run runs scenario through Bench.Run, as the command does, and returns
// its result lines decoded.
func run(t *testing.T, b *Bench, scenario string) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), b.Deadline)
	defer cancel()
	var out bytes.Buffer
	if err := b.Run(ctx, scenario, &out); err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: line %q is not JSON: %v", scenario, l, err)
		}
		t.Logf("%s", l)
		lines = append(lines, m)
	}
	return lines
}

// want checks fields of a result line: a number (float64 once decoded),
// or a bool or a string.
func want(t *testing.T, line map[string]any, fields map[string]any) {
	t.Helper()
	for k, w := range fields {
		var got any = line
		for _, part := range strings.Split(k, ".") {
			m, _ := got.(map[string]any)
			got = m[part]
		}
		if n, ok := w.(int); ok {
			w = float64(n)
		}
		if got != w {
			t.Errorf("%s: %s = %v, want %v", line["scenario"], k, got, w)
		}
	}
}

// positive checks that fields are numbers above 0.
func positive(t *testing.T, line map[string]any, fields ...string) {
	t.Helper()
	for _, k := range fields {
		var got any = line
		for _, part := range strings.Split(k, ".") {
			m, _ := got.(map[string]any)
			got = m[part]
		}
		if n, ok := got.(float64); !ok || n <= 0 {
			t.Errorf("%s: %s = %v, want > 0", line["scenario"], k, got)
		}
	}
}

// TestScenarios runs every scenario at a tiny size against a real server,
// through the tool's own code path, so that the tool keeps working.
func TestScenarios(t *testing.T) {
	// raw-etcd speaks plain HTTP (it measures etcd, not TLS): the server
	// runs on an etcd of the test's instead of its embedded one, which
	// takes TLS clients only.
	ts := testserver.Start(t, testserver.WithEtcd(etcdtest.Start(t).URL()))
	cfg := defaultConfig()
	cfg.Server, cfg.Token = ts.URL, ts.Token
	if ts.Server.CAPEM != nil {
		cfg.CAFile = filepath.Join(t.TempDir(), "ca.crt")
		if err := os.WriteFile(cfg.CAFile, ts.Server.CAPEM, 0o600); err != nil {
			t.Fatal(err)
		}
	} else {
		cfg.Insecure = true
	}
	cfg.Namespace = "bench-e2e"
	cfg.Count, cfg.Size, cfg.Concurrency = 150, 256, 4
	cfg.Duration, cfg.Repeats, cfg.PageSize = 300*time.Millisecond, 2, 40
	cfg.Watchers, cfg.Updates, cfg.WatchObjects = 3, 20, 2
	cfg.PID, cfg.EtcdURL = os.Getpid(), ts.Server.EtcdURL
	cfg.Deadline = time.Minute
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	b := &Bench{Config: cfg}
	t.Cleanup(func() {
		if b.client != nil {
			b.client.CloseIdle()
		}
	})

	t.Run("all", func(t *testing.T) {
		lines := run(t, b, "all")
		if len(lines) != len(allScenarios) {
			t.Fatalf("got %d lines, want one per scenario of %v", len(lines), allScenarios)
		}
		for i, name := range allScenarios {
			want(t, lines[i], map[string]any{"scenario": name, "server": ts.URL, "params.namespace": "bench-e2e"})
		}
		create, get, list, watch, memory := lines[0], lines[1], lines[2], lines[3], lines[4]
		want(t, create, map[string]any{"created": 150, "skipped_existing": 0, "errors": 0, "samples": 150, "proto": "HTTP/2.0"})
		positive(t, create, "ops_per_sec", "p50_ms", "p99_ms")
		want(t, get, map[string]any{"errors": 0})
		positive(t, get, "ops_per_sec", "p50_ms", "p99_ms", "samples")
		for _, v := range []string{"rv0", "rv_unset", "paginated", "selector_bucket_7"} {
			want(t, list, map[string]any{v + ".count_mismatches": 0, v + ".errors": 0, v + ".samples": 2})
			positive(t, list, v+".p50_ms", v+".bytes")
		}
		// The namespace also holds kube-root-ca.crt, as every namespace does.
		want(t, list, map[string]any{"rv0.items": 151, "paginated.items": 151, "paginated.pages": 4,
			"selector_bucket_7.items": 2, "selector_bucket_7.items_expected": 2})
		want(t, watch, map[string]any{"updates_acked": 20, "events_expected": 60, "events_delivered": 60,
			"watchers_missed": 0, "watchers_duplicated": 0, "watchers_reordered": 0, "watchers_failed": 0, "complete": true})
		positive(t, watch, "events_per_sec", "delivery_p50_ms", "delivery_p99_ms", "all_delivered_ms")
		positive(t, memory, "rss_bytes", "hwm_bytes")
	})

	t.Run("cluster", func(t *testing.T) {
		cb := &Bench{Config: cfg}
		cb.Namespace = "bench-cluster"
		cb.Nodes, cb.PodsPerNode, cb.PodSize, cb.Informers = 3, 3, 2000, 2
		cb.Duration, cb.ChurnPerSec = 2*time.Second, 2
		cb.LeasePeriod, cb.NodeStatusPeriod = 300*time.Millisecond, time.Second
		t.Cleanup(func() {
			if cb.client != nil {
				cb.client.CloseIdle()
			}
		})
		line := run(t, cb, "cluster")[0]
		want(t, line, map[string]any{"objects_lost": 0, "node_watch_out_of_order": 0, "informer_out_of_order": 0,
			"node_watch_failed": 0, "informer_failed": 0, "node_watch_terminated": 0, "informer_terminated": 0})
		positive(t, line, "pod_create_samples", "pod_bind_samples", "pod_status_patch_samples", "lease_put_samples",
			"node_status_patch_samples", "node_watch_delivery_samples", "node_watch_events", "informer_events",
			"list_all_pods_paged_samples", "list_all_pods_rv0_samples", "pods_churned", "server_cpu_s", "server_rss_bytes")
		// Every pod placed (9, and those churned) reached its node's watch.
		if n, _ := line["node_watch_delivery_samples"].(float64); n < 9 {
			t.Errorf("node_watch_delivery_samples = %v, want every placed pod (at least 9)", n)
		}
	})

	t.Run("create skips existing", func(t *testing.T) {
		line := run(t, b, "create")[0]
		want(t, line, map[string]any{"created": 0, "skipped_existing": 150, "errors": 0})
	})

	t.Run("raw-etcd", func(t *testing.T) {
		lines := run(t, b, "raw-etcd")
		if len(lines) != 3 {
			t.Fatalf("got %d lines, want create, get and list", len(lines))
		}
		want(t, lines[0], map[string]any{"scenario": "raw-etcd-create", "server": cfg.EtcdURL, "created": 150, "errors": 0})
		want(t, lines[1], map[string]any{"scenario": "raw-etcd-get", "errors": 0})
		positive(t, lines[1], "ops_per_sec", "p99_ms")
		want(t, lines[2], map[string]any{"scenario": "raw-etcd-list", "rv_unset.items": 150, "paginated.pages": 4,
			"paginated.items": 150, "selector_bucket_7.items": 2, "selector_bucket_7.count_mismatches": 0})
	})

	t.Run("startup", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		sb := &Bench{Config: cfg}
		sb.Server, sb.Token, sb.CAFile = "http://"+addr, "fake-token", ""
		mark := filepath.Join(t.TempDir(), "stopped")
		// Not exec: the server is a child of sh, which SIGTERM ends at
		// once; the scenario must still wait for the server.
		sb.Cmd = fmt.Sprintf("export %s=%s %s=%s; %s -test.run=^$; true", fakeServerEnv, addr, fakeServerMarkEnv, mark, os.Args[0])
		sb.CmdLog = filepath.Join(t.TempDir(), "cmd.log")
		sb.StartupIdle = 100 * time.Millisecond
		line := run(t, sb, "startup")[0]
		want(t, line, map[string]any{"stop_signal": "SIGTERM"})
		positive(t, line, "rss_bytes", "probes")
		if ready, _ := line["ready_ms"].(float64); ready < 200 {
			t.Errorf("ready_ms = %v, but the fake server waits 200 ms before listening", ready)
		}
		if procs, _ := line["processes"].([]any); len(procs) != 2 {
			t.Errorf("processes = %v, want sh and the server", line["processes"])
		}
		if _, err := os.Stat(mark); err != nil {
			t.Errorf("the scenario returned before the server had stopped: %v", err)
		}
		if stop, _ := line["stop_ms"].(float64); stop < 300 {
			t.Errorf("stop_ms = %v, but the fake server takes 300 ms to stop", stop)
		}
		// A server already answering would make the figure meaningless.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		srv := &http.Server{Addr: addr, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		if err := sb.Run(ctx, "startup", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "already answers") {
			t.Errorf("startup with a server already up: err = %v, want 'already answers'", err)
		}
	})

	t.Run("cleanup", func(t *testing.T) {
		raw := &Bench{Config: cfg}
		raw.Server = ""
		line := run(t, raw, "cleanup")[0]
		want(t, line, map[string]any{"raw_etcd_keys_deleted": 150})

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.Run(ctx, "cleanup", &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		c, _ := b.Client()
		if _, err := c.Do(ctx, http.MethodGet, "/api/v1/namespaces/bench-e2e", nil, nil, "", false); !isStatus(err, http.StatusNotFound) {
			t.Errorf("namespace after cleanup: %v, want 404", err)
		}
	})
}
