// Package periodic runs work at a fixed period on a timer instead of on a
// goroutine of its own.
//
// A server keeps a few periodic loops per resource (the watch cache's
// compaction check, the object count metric): with ~60 resources, a
// goroutine each is ~180 goroutines parked on tickers, ~1.5 MiB of stacks
// that also count toward the garbage collector's heap goal. A timer holds
// no stack while it waits; the runtime starts a goroutine for each run.
package periodic

import (
	"context"
	"sync"
	"time"
)

// Every runs f after first, then every period (one period after a run
// returns, so runs never overlap) until ctx ends.
// The returned wait, called once ctx has ended, waits for a run in
// progress, so that nothing of f runs after it returns.
func Every(ctx context.Context, first, period time.Duration, f func()) (wait func()) {
	var (
		mu      sync.Mutex // orders running.Add before running.Wait
		running sync.WaitGroup
		timer   *time.Timer
	)
	tick := func() {
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			return
		}
		running.Add(1)
		mu.Unlock()
		defer running.Done()
		f()
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			timer.Reset(period)
		}
	}
	mu.Lock()
	timer = time.AfterFunc(first, tick)
	mu.Unlock()
	return func() {
		mu.Lock()
		timer.Stop()
		mu.Unlock()
		running.Wait()
	}
}
