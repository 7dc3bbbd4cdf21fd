package filters

import (
	"context"
	"sync"
	"time"
)

// Limiter bounds how many requests run at once, and shares the places
// fairly between flows (users) when they are all taken: a request that
// finds none waits in its flow's queue, and each place freed goes to the
// next flow in turn (round robin), so a flow flooding the server gets no
// more than its share while others are waiting. A request waits at most
// maxWait, and a flow queues at most queueLength requests; past either it
// is refused. This is the fair-queuing core of kube's API Priority and
// Fairness, with one priority level and one queue per flow.
type Limiter struct {
	limit       int
	queueLength int
	maxWait     time.Duration
	// inUse reports the places taken whenever they change (a metric).
	inUse func(n int)

	mu      sync.Mutex
	running int
	waiting map[string][]*waiter
	order   []string // flows with waiting requests, the next to serve first
}

type waiter struct {
	ready   chan struct{}
	granted bool // under Limiter.mu
}

// NewLimiter returns a limiter of limit places (limit > 0).
func NewLimiter(limit, queueLength int, maxWait time.Duration, inUse func(int)) *Limiter {
	if inUse == nil {
		inUse = func(int) {}
	}
	return &Limiter{limit: limit, queueLength: queueLength, maxWait: maxWait, inUse: inUse, waiting: map[string][]*waiter{}}
}

// Acquire takes a place for a request of flow, waiting in the flow's
// queue if need be. It reports false when the request must be refused
// (its queue is full, or it waited maxWait or until ctx ended); else the
// caller must call Release once the request is done.
func (l *Limiter) Acquire(ctx context.Context, flow string) bool {
	l.mu.Lock()
	if l.running < l.limit && len(l.order) == 0 {
		l.running++
		l.inUse(l.running)
		l.mu.Unlock()
		return true
	}
	q := l.waiting[flow]
	if len(q) >= l.queueLength {
		l.mu.Unlock()
		return false
	}
	w := &waiter{ready: make(chan struct{})}
	if len(q) == 0 {
		l.order = append(l.order, flow)
	}
	l.waiting[flow] = append(q, w)
	l.mu.Unlock()

	timer := time.NewTimer(l.maxWait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.granted {
		return true // granted while giving up: the place is ours
	}
	l.dequeueLocked(flow, w)
	return false
}

// Release frees the place of a finished request: it goes to the first
// waiter of the next flow in turn, or back to the pool.
func (l *Limiter) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.order) == 0 {
		l.running--
		l.inUse(l.running)
		return
	}
	flow := l.order[0]
	q := l.waiting[flow]
	w := q[0]
	l.order = l.order[1:]
	if len(q) == 1 {
		delete(l.waiting, flow)
	} else {
		l.waiting[flow] = q[1:]
		l.order = append(l.order, flow) // to the back of the line
	}
	w.granted = true
	close(w.ready)
}

// dequeueLocked removes a waiter that gave up.
func (l *Limiter) dequeueLocked(flow string, w *waiter) {
	q := l.waiting[flow]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) > 0 {
		l.waiting[flow] = q
		return
	}
	delete(l.waiting, flow)
	for i, f := range l.order {
		if f == flow {
			l.order = append(l.order[:i:i], l.order[i+1:]...)
			break
		}
	}
}
