package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// runGet GETs randomly chosen ConfigMaps bench-<i> (i < --count, made by
// create) --concurrency at a time, for --duration or --max-requests,
// whichever comes first.
func runGet(ctx context.Context, b *Bench) (Result, error) {
	c, err := b.Client()
	if err != nil {
		return Result{}, err
	}
	path := configMapsPath(b.Namespace) + "/"
	var proto atomic.Value
	run := runWorkersUntil(ctx, b.Concurrency, timedOps(b.Duration, b.MaxRequests), func(ctx context.Context, _ int) error {
		resp, err := c.Do(ctx, http.MethodGet, path+benchName(rand.IntN(b.Count)), nil, nil, "", false)
		if err == nil {
			proto.CompareAndSwap(nil, resp.Proto)
		}
		return err
	})
	r := b.result("get", Fields{"count": b.Count, "concurrency": b.Concurrency, "duration_ms": ms(b.Duration), "max_requests": b.MaxRequests})
	r.Fields.add(run.fields())
	r.Fields["proto"] = proto.Load()
	return r, ctx.Err()
}

// timedOps hands out operation numbers until d has passed since its first
// call or limit were handed out.
func timedOps(d time.Duration, limit int) func() (int, bool) {
	var next atomic.Int64
	var start atomic.Pointer[time.Time]
	return func() (int, bool) {
		now := time.Now()
		start.CompareAndSwap(nil, &now)
		n := int(next.Add(1) - 1)
		return n, n < limit && time.Since(*start.Load()) < d
	}
}
