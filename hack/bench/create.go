package main

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// runCreate creates ConfigMaps bench-0 .. bench-<count-1> in the namespace,
// --concurrency at a time, skipping those that exist already (found by a
// paginated LIST first, so that every latency sample is a real create).
func runCreate(ctx context.Context, b *Bench) (Result, error) {
	c, err := b.Client()
	if err != nil {
		return Result{}, err
	}
	if err := c.ensureNamespace(ctx, b.Namespace); err != nil {
		return Result{}, err
	}
	existing, err := c.list(ctx, b.Namespace, nil, 500)
	if err != nil {
		return Result{}, err
	}
	have := make(map[int]bool, len(existing.Items))
	for _, it := range existing.Items {
		if i := benchIndex(it.Metadata.Name); i >= 0 {
			have[i] = true
		}
	}
	todo := make([]int, 0, b.Count)
	for i := range b.Count {
		if !have[i] {
			todo = append(todo, i)
		}
	}

	path := configMapsPath(b.Namespace)
	run := runWorkers(ctx, b.Concurrency, len(todo), func(ctx context.Context, n int) error {
		_, err := c.Do(ctx, http.MethodPost, path, nil, configMapJSON(b.Namespace, todo[n], b.Size), "application/json", false)
		return err
	})

	r := b.result("create", Fields{"count": b.Count, "size_bytes": b.Size, "concurrency": b.Concurrency})
	r.Fields.add(run.fields())
	r.Fields["skipped_existing"] = b.Count - len(todo)
	r.Fields["created"] = run.ok
	r.Fields["proto"] = existing.Proto
	return r, ctx.Err()
}

// workerRun is what runWorkers measured.
type workerRun struct {
	ok      int
	elapsed time.Duration
	lat     []time.Duration
	errs    errorSamples
}

// fields reports operations per second (successful ones over the wall time
// of the whole run), the latency of successful operations, and errors.
func (w *workerRun) fields() Fields {
	f := Summarize(w.lat).Fields("")
	f["ops_per_sec"] = perSec(w.ok, w.elapsed)
	f["elapsed_ms"] = ms(w.elapsed)
	f.add(w.errs.fields())
	return f
}

// runWorkers calls op(ctx, n) for n in [0, total) from concurrency
// goroutines, and stops early when ctx ends. It times each call.
func runWorkers(ctx context.Context, concurrency, total int, op func(ctx context.Context, n int) error) *workerRun {
	var next atomic.Int64
	return runWorkersUntil(ctx, concurrency, func() (int, bool) {
		n := int(next.Add(1) - 1)
		return n, n < total
	}, op)
}

// runWorkersUntil calls op(ctx, n) for every n that nextOp hands out, from
// concurrency goroutines, until nextOp says stop or ctx ends.
func runWorkersUntil(ctx context.Context, concurrency int, nextOp func() (int, bool), op func(ctx context.Context, n int) error) *workerRun {
	type part struct {
		lat  []time.Duration
		errs errorSamples
	}
	parts := make([]part, concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range concurrency {
		wg.Go(func() {
			p := &parts[w]
			for ctx.Err() == nil {
				n, ok := nextOp()
				if !ok {
					return
				}
				t0 := time.Now()
				err := op(ctx, n)
				d := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						return // cut short by the deadline: not the server's error
					}
					p.errs.add(err)
					continue
				}
				p.lat = append(p.lat, d)
			}
		})
	}
	wg.Wait()
	run := &workerRun{elapsed: time.Since(start)}
	for i := range parts {
		run.lat = append(run.lat, parts[i].lat...)
		run.errs.merge(&parts[i].errs)
	}
	run.ok = len(run.lat)
	return run
}
