// Package backoff paces the retries of a loop that fails: waits that
// double from an initial one up to a cap, with jitter, and start over once
// a run has gone well for long enough (kube's reflector's policy).
//
// Layers: a leaf, importing nothing of this project; the watch cache's
// reflector (pkg/cacher) and the registry's list-and-watch loops
// (pkg/registry/follow) pace themselves with it.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is how the waits grow.
type Policy struct {
	// Initial is the first wait; each failure doubles it up to Max.
	Initial, Max time.Duration
	// Jitter adds up to this fraction of a wait at random (0.2: up to
	// 20 % more), so that loops that fail together do not retry together.
	// A wait is at most Max*(1+Jitter).
	Jitter float64
	// Reset is how long a run must have lasted to count as healthy: the
	// wait after it starts over at Initial. 0: every run is healthy.
	Reset time.Duration
}

// Backoff is the waits of one loop. Not safe for concurrent use: the loop
// that fails owns it.
type Backoff struct {
	policy Policy
	next   time.Duration
}

// New returns the waits of p, starting at p.Initial.
func New(p Policy) *Backoff {
	return &Backoff{policy: p, next: p.Initial}
}

// Next returns how long to wait after a run that lasted ran and failed,
// and doubles the wait after it.
func (b *Backoff) Next(ran time.Duration) time.Duration {
	if ran >= b.policy.Reset {
		b.next = b.policy.Initial
	}
	d := b.next
	b.next = min(2*b.next, b.policy.Max)
	if b.policy.Jitter > 0 && d > 0 {
		d += time.Duration(rand.Float64() * b.policy.Jitter * float64(d))
	}
	return d
}

// Wait waits d, or until ctx ends; it reports whether it waited d.
func Wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
