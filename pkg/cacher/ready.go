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
// resource nothing else would move the cache's revision. Its loop runs
// only while there is something to ask (a goroutine per cache parked on
// channels would be ~60 idle stacks in a server).
type progressRequester struct {
	requester storage.ProgressRequester // nil when the store cannot
	ctx       context.Context
	mu        sync.Mutex
	waiting   int
	once      bool // a single request is due
	looping   bool
	stopped   bool
	loops     sync.WaitGroup
}

const progressRequestInterval = 100 * time.Millisecond

func newProgressRequester(ctx context.Context, s storage.Interface) *progressRequester {
	p := &progressRequester{ctx: ctx}
	p.requester, _ = s.(storage.ProgressRequester)
	return p
}

// want registers a waiting read; call the returned func when done.
func (p *progressRequester) want() func() {
	p.mu.Lock()
	p.waiting++
	p.startLocked()
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
		})
	}
}

// requestOnce asks for one progress notification, without waiting.
func (p *progressRequester) requestOnce() {
	p.mu.Lock()
	p.once = true
	p.startLocked()
	p.mu.Unlock()
}

// startLocked starts the loop unless it runs (or the cache stopped).
func (p *progressRequester) startLocked() {
	if p.requester == nil || p.looping || p.stopped {
		return
	}
	p.looping = true
	p.loops.Add(1)
	go p.loop()
}

// loop requests progress, then again every interval while a read waits.
func (p *progressRequester) loop() {
	defer p.loops.Done()
	for {
		p.mu.Lock()
		p.once = false
		p.mu.Unlock()
		p.request()
		p.mu.Lock()
		if p.waiting == 0 && !p.once {
			p.looping = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		select {
		case <-p.ctx.Done():
			p.mu.Lock()
			p.looping = false
			p.mu.Unlock()
			return
		case <-time.After(progressRequestInterval):
		}
	}
}

// stop waits for the loop to end (the cache's context has ended) and
// starts no other.
func (p *progressRequester) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	p.loops.Wait()
}

func (p *progressRequester) request() {
	reqCtx, cancel := context.WithTimeout(p.ctx, time.Second)
	defer cancel()
	_ = p.requester.RequestWatchProgress(reqCtx) // best effort: a wait times out otherwise
}
