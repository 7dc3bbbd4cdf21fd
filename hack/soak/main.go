// Command soak puts one miniapiserver under mixed load with watch churn for
// a while, then checks that what the load created is gone once it stops:
// goroutines, heap and open file descriptors are sampled (from /metrics,
// the heap after a forced GC through /debug/pprof) before the load and
// after it, and the run fails when they grew past the bounds. The server
// must serve plain HTTP (--insecure-port) with --profiling; hack/soak.sh
// starts one.
//
//	go run ./hack/soak --server http://127.0.0.1:18090 --duration 10m
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// bounds of the growth accepted between the samples before and after the
// load: a leak of one goroutine or descriptor per watch or request passes
// them within seconds of load.
type bounds struct {
	goroutines int
	fds        int
	heapBytes  int64
}

func main() {
	server := flag.String("server", "http://127.0.0.1:18090", "The server's plain HTTP URL (--insecure-port), loopback only.")
	duration := flag.Duration("duration", 10*time.Minute, "How long the load runs.")
	writers := flag.Int("writers", 8, "Concurrent writers (create, update, delete).")
	watchers := flag.Int("watchers", 50, "Concurrent watchers, each ending and starting its watch again every 0.5-5 s.")
	readers := flag.Int("readers", 4, "Concurrent readers (get, list, paginated list).")
	settle := flag.Duration("settle", 30*time.Second, "How long to wait after the load for the server to settle below the bounds.")
	var b bounds
	flag.IntVar(&b.goroutines, "max-goroutine-growth", 100, "Goroutines the server may have gained after the load.")
	flag.IntVar(&b.fds, "max-fd-growth", 20, "Open file descriptors the server may have gained after the load.")
	flag.Int64Var(&b.heapBytes, "max-heap-growth", 128<<20, "Heap bytes (after a GC) the server may have gained after the load (the watch cache keeps the objects and recent events).")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := newClient(*server)
	if err != nil {
		fail(err)
	}
	if err := c.ensureNamespace(ctx); err != nil {
		fail(err)
	}
	before, err := c.sample(ctx)
	if err != nil {
		fail(err)
	}
	fmt.Printf("before: %s\n", before)

	load := run(ctx, c, *duration, *writers, *watchers, *readers)
	fmt.Printf("load: %s\n", load)

	after, ok := settleWithin(ctx, c, before, b, *settle)
	fmt.Printf("after:  %s\n", after)
	line, _ := json.Marshal(map[string]any{"scenario": "soak", "duration": duration.String(), "before": before, "after": after, "load": load, "ok": ok})
	fmt.Println(string(line))
	if !ok {
		fail(fmt.Errorf("the server grew past the bounds (goroutines +%d, fds +%d, heap +%d bytes) after the load", b.goroutines, b.fds, b.heapBytes))
	}
}

// settleWithin samples until the growth is within b, or timeout passes.
func settleWithin(ctx context.Context, c *client, before sample, b bounds, timeout time.Duration) (sample, bool) {
	deadline := time.Now().Add(timeout)
	for {
		after, err := c.sample(ctx)
		if err != nil {
			fail(err)
		}
		if after.within(before, b) {
			return after, true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return after, false
		}
		time.Sleep(time.Second)
	}
}

func (s sample) within(before sample, b bounds) bool {
	return s.Goroutines-before.Goroutines <= b.goroutines &&
		s.OpenFDs-before.OpenFDs <= b.fds &&
		s.HeapBytes-before.HeapBytes <= b.heapBytes
}

// run runs the load until duration passes and every worker stopped.
func run(ctx context.Context, c *client, duration time.Duration, writers, watchers, readers int) *counts {
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	n := &counts{}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { c.write(ctx, i, n) })
	}
	for i := range watchers {
		wg.Go(func() { c.watchChurn(ctx, i, n) })
	}
	for i := range readers {
		wg.Go(func() { c.read(ctx, i, n) })
	}
	wg.Wait()
	return n
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "soak:", err)
	os.Exit(1)
}
