package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// sample is the server's state at a moment.
type sample struct {
	Goroutines int   `json:"goroutines"`
	OpenFDs    int   `json:"open_fds"`
	HeapBytes  int64 `json:"heap_bytes"`
}

func (s sample) String() string {
	return fmt.Sprintf("%d goroutines, %d open fds, heap %.1f MiB", s.Goroutines, s.OpenFDs, float64(s.HeapBytes)/(1<<20))
}

// sample forces a GC (the heap profile's gc=1), then reads the Go and
// process collectors' metrics.
func (c *client) sample(ctx context.Context) (sample, error) {
	if code, data, err := c.do(ctx, http.MethodGet, "/debug/pprof/heap?gc=1", nil); err != nil || code != http.StatusOK {
		return sample{}, fmt.Errorf("forcing a GC through /debug/pprof/heap (is --profiling on?): %d %v %.200s", code, err, data)
	}
	code, data, err := c.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil || code != http.StatusOK {
		return sample{}, fmt.Errorf("/metrics: %d %v", code, err)
	}
	m := parseMetrics(data)
	s := sample{Goroutines: int(m["go_goroutines"]), OpenFDs: int(m["process_open_fds"]), HeapBytes: int64(m["go_memstats_heap_alloc_bytes"])}
	if s.Goroutines == 0 || s.OpenFDs == 0 || s.HeapBytes == 0 {
		return s, fmt.Errorf("/metrics lacks go_goroutines, process_open_fds or go_memstats_heap_alloc_bytes")
	}
	return s, nil
}

// parseMetrics reads the unlabeled samples of a Prometheus text page.
func parseMetrics(data []byte) map[string]float64 {
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.Contains(line, "{") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			m[name] = v
		}
	}
	return m
}
