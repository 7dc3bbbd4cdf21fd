package main

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// durations returns 1ms .. n ms in a shuffled order.
func durations(n int) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration((i*7919)%n+1) * time.Millisecond
	}
	return d
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		n    int
		p    float64
		want time.Duration
	}{
		{"empty", 0, 50, 0},
		{"one sample is every percentile", 1, 99, time.Millisecond},
		{"p50 of 10 is the 5th", 10, 50, 5 * time.Millisecond},
		{"p90 of 10 is the 9th", 10, 90, 9 * time.Millisecond},
		{"p99 of 10 is the largest", 10, 99, 10 * time.Millisecond},
		{"p99 of 100 is the 99th", 100, 99, 99 * time.Millisecond},
		{"p99 of 1000 is the 990th", 1000, 99, 990 * time.Millisecond},
		{"p50 of 3 is the middle", 3, 50, 2 * time.Millisecond},
		{"p100 is the max", 7, 100, 7 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := durations(tc.n)
			slices.Sort(s)
			if got := Percentile(s, tc.p); got != tc.want {
				t.Errorf("Percentile(1..%d ms, %v) = %v, want %v", tc.n, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	in := durations(200)
	orig := slices.Clone(in)
	s := Summarize(in)
	if !slices.Equal(in, orig) {
		t.Error("Summarize reordered its input")
	}
	want := Summary{N: 200, P50: 100 * time.Millisecond, P90: 180 * time.Millisecond, P99: 198 * time.Millisecond,
		Max: 200 * time.Millisecond, Mean: 100500 * time.Microsecond}
	if s != want {
		t.Errorf("Summarize(1..200 ms) = %+v, want %+v", s, want)
	}
	f := s.Fields("x_")
	if f["x_p99_ms"] != 198.0 || f["x_mean_ms"] != 100.5 || f["x_samples"] != 200 {
		t.Errorf("Fields = %v", f)
	}
}

func TestResultLine(t *testing.T) {
	r := Result{
		Scenario: "list",
		Server:   "https://127.0.0.1:6443",
		Time:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)),
		Params:   Fields{"count": 10},
		Fields:   Fields{"zeta_ms": 1.5, "alpha": Fields{"p50_ms": 2.0, "bytes": 7}, "ops_per_sec": 3.0},
	}
	line, err := r.Line()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"scenario":"list","server":"https://127.0.0.1:6443","time":"2026-01-02T02:04:05Z","params":{"count":10},` +
		`"alpha":{"bytes":7,"p50_ms":2},"ops_per_sec":3,"zeta_ms":1.5}` + "\n"
	if string(line) != want {
		t.Errorf("Line() =\n%s want\n%s", line, want)
	}
	if strings.Count(string(line), "\n") != 1 {
		t.Error("a result must be exactly one line")
	}
	var back map[string]any
	if err := json.Unmarshal(line, &back); err != nil {
		t.Errorf("line is not JSON: %v", err)
	}

	r.Fields["scenario"] = "clash"
	if _, err := r.Line(); err == nil {
		t.Error("a field named like the header was accepted")
	}
}

func TestErrorSamples(t *testing.T) {
	var e errorSamples
	for i := range 20 {
		e.add(errors.New(strings.Repeat("x", i%7)))
	}
	var o errorSamples
	o.add(errors.New("other"))
	e.merge(&o)
	f := e.fields()
	if f["errors"] != 21 {
		t.Errorf("errors = %v, want 21", f["errors"])
	}
	if s := f["error_samples"].([]string); len(s) != maxErrorSamples {
		t.Errorf("error_samples = %q, want %d distinct", s, maxErrorSamples)
	}
	var none errorSamples
	if _, ok := none.fields()["error_samples"]; ok {
		t.Error("error_samples reported without errors")
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name         string
		bench, watch int
	}{
		{"bench-0", 0, -1},
		{"bench-9999", 9999, -1},
		{"bench-007", -1, -1},
		{"bench-", -1, -1},
		{"bench--1", -1, -1},
		{"bench-watch-3", -1, 3},
		{"kube-root-ca.crt", -1, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := benchIndex(tc.name); got != tc.bench {
				t.Errorf("benchIndex = %d, want %d", got, tc.bench)
			}
			if got := watchIndex(tc.name); got != tc.watch {
				t.Errorf("watchIndex = %d, want %d", got, tc.watch)
			}
		})
	}
}

func items(names ...string) []listItem {
	var out []listItem
	for _, n := range names {
		it := listItem{Metadata: objectMeta{Name: n}}
		if i := benchIndex(n); i >= 0 {
			it.Metadata.Labels = map[string]string{"bucket": bucketOf(i)}
		}
		out = append(out, it)
	}
	return out
}

func TestCheckItems(t *testing.T) {
	tests := []struct {
		name   string
		items  []listItem
		count  int
		bucket int
		ok     bool
	}{
		{"all there, plus others", items("bench-0", "bench-1", "bench-2", "bench-watch-0", "bench-5"), 3, -1, true},
		{"one missing", items("bench-0", "bench-2"), 3, -1, false},
		{"one twice", items("bench-0", "bench-1", "bench-1"), 2, -1, false},
		{"selector", items("bench-7", "bench-107"), 200, 7, true},
		{"selector misses one", items("bench-7"), 200, 7, false},
		{"selector returns another bucket", items("bench-7", "bench-107", "bench-8"), 200, 7, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkItems(tc.items, tc.count, tc.bucket)
			if (err == nil) != tc.ok {
				t.Errorf("checkItems = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if got := expectedItems(10000, 7); got != 100 {
		t.Errorf("expectedItems(10000, 7) = %d, want 100", got)
	}
	if got := expectedItems(150, 7); got != 2 {
		t.Errorf("expectedItems(150, 7) = %d, want 2", got)
	}
}

func TestAnalyzeWatchers(t *testing.T) {
	start := time.Now()
	ev := func(obj, seq int, rv uint64) watchEvent {
		recv := start.Add(time.Duration(rv) * time.Millisecond)
		return watchEvent{obj: obj, seq: seq, rv: rv, rvOK: true, recv: recv, sent: start.UnixNano()}
	}
	ws := &watchWrites{start: start, acked: [][]int{{1, 2, 3}, {1, 2}}}
	good := &watcher{events: []watchEvent{ev(0, 1, 10), ev(1, 1, 11), ev(0, 2, 12), ev(1, 2, 13), ev(0, 3, 14)}}
	missed := &watcher{events: []watchEvent{ev(0, 1, 10), ev(0, 3, 14), ev(1, 1, 11)}}
	dup := &watcher{events: []watchEvent{ev(0, 1, 10), ev(0, 1, 10)}}
	reordered := &watcher{events: []watchEvent{ev(0, 2, 12), ev(0, 1, 13)}}
	rvBack := &watcher{events: []watchEvent{ev(0, 1, 12), ev(1, 1, 11)}}

	tests := []struct {
		name     string
		watchers []*watcher
		want     Fields
	}{
		{"all delivered", []*watcher{good, good}, Fields{"events_delivered": 10, "events_missed": 0, "watchers_missed": 0,
			"watchers_duplicated": 0, "watchers_reordered": 0, "complete": true, "all_delivered_ms": 14.0, "delivery_p99_ms": 14.0}},
		{"missed", []*watcher{good, missed}, Fields{"events_delivered": 8, "events_missed": 2, "watchers_missed": 1, "complete": false}},
		{"duplicated", []*watcher{dup}, Fields{"watchers_duplicated": 1, "watchers_reordered": 0, "watchers_missed": 1, "events_delivered": 1}},
		{"sequence reordered", []*watcher{reordered}, Fields{"watchers_reordered": 1, "watchers_duplicated": 0}},
		{"resourceVersion reordered", []*watcher{rvBack}, Fields{"watchers_reordered": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := analyzeWatchers(tc.watchers, ws)
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s = %v, want %v", k, got[k], want)
				}
			}
		})
	}
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		host   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"localhost", false, true},
		{"192.0.2.1", false, false},
		{"192.0.2.1", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			err := checkLoopback(tc.host, tc.remote)
			if (err == nil) != tc.ok {
				t.Errorf("checkLoopback(%q, %v) = %v, want ok=%v", tc.host, tc.remote, err, tc.ok)
			}
		})
	}
	if _, err := NewClient(ClientOptions{Server: "https://192.0.2.1:6443"}); err == nil {
		t.Error("NewClient accepted a remote server")
	}
}

func TestProcMemory(t *testing.T) {
	m, err := readProcMemory(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("own memory: rss %d, hwm %d", m.RSS, m.HWM)
	}
	if tree := processTree(os.Getpid()); tree[0] != os.Getpid() {
		t.Errorf("processTree starts with %d, want self", tree[0])
	}
	if total, procs := treeMemory(os.Getpid()); total < m.RSS/2 || len(procs) == 0 {
		t.Errorf("treeMemory = %d over %d processes, own RSS %d", total, len(procs), m.RSS)
	}
}
