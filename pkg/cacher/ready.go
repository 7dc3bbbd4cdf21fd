package cacher

import (
	"context"
	"sync"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// readiness says whether the cache holds a complete list. It goes down
// when the reflector starts a re-list and up when the list is in.
type readiness struct {
	mu           sync.Mutex
	ready        bool
	stopped      bool
	generation   int
	unreadySince time.Time
}

func newReadiness() *readiness { return &readiness{unreadySince: time.Now()} }

// check reports readiness and the generation (bumped on each ready).
func (r *readiness) check() (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready && !r.stopped, r.generation
}

// retryAfter is the Retry-After of a request refused while not ready: one
// second for a short outage, growing to 10 s for a long one.
func (r *readiness) retryAfter() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return min(max(int(time.Since(r.unreadySince).Seconds()/10), 1), 10)
}

func (r *readiness) set(ready bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ready && !r.ready {
		r.generation++
	}
	if !ready && r.ready {
		r.unreadySince = time.Now()
	}
	r.ready = ready
}

func (r *readiness) stop() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

// progressRequester asks the store for watch progress notifications every
// 100 ms while some read waits for the cache to catch up: on an idle
// resource nothing else would move the cache's revision.
type progressRequester struct {
	requester storage.ProgressRequester // nil when the store cannot
	mu        sync.Mutex
	waiting   int
	wake      chan struct{}
	once      chan struct{}
}

const progressRequestInterval = 100 * time.Millisecond

func newProgressRequester(s storage.Interface) *progressRequester {
	p := &progressRequester{wake: make(chan struct{}, 1), once: make(chan struct{}, 1)}
	p.requester, _ = s.(storage.ProgressRequester)
	return p
}

// want registers a waiting read; call the returned func when done.
func (p *progressRequester) want() func() {
	p.mu.Lock()
	p.waiting++
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
		})
	}
}

func (p *progressRequester) run(ctx context.Context) {
	if p.requester == nil {
		return
	}
	for {
		// Idle until a read waits: no timer runs on a quiet cache.
		select {
		case <-ctx.Done():
			return
		case <-p.once:
			p.request(ctx)
			continue
		case <-p.wake:
		}
		for p.waitingCount() > 0 {
			p.request(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(progressRequestInterval):
			}
		}
	}
}

// requestOnce asks for one progress notification, without waiting.
func (p *progressRequester) requestOnce() {
	select {
	case p.once <- struct{}{}:
	default:
	}
}

func (p *progressRequester) request(ctx context.Context) {
	reqCtx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = p.requester.RequestWatchProgress(reqCtx) // best effort: a wait times out otherwise
}

func (p *progressRequester) waitingCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting
}
