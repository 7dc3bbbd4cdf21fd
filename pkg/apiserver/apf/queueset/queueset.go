// Package queueset is the queuing of one API Priority and Fairness
// priority level: a number of seats (its concurrency limit), queues that
// requests are shuffle-sharded to by their flow, and fair dispatch from
// those queues in virtual time, as kube's fairqueuing/queueset does.
//
// Layers: part of pkg/apiserver/apf; it knows nothing of HTTP, of flow
// schemas or of the API: a request is a flow hash, a width in seats and a
// description for the dumps.
package queueset

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// EstimatedServiceDuration is how long a request is assumed to run when
// it is dispatched (kube's estimate: 3 s); the queue is credited back the
// difference once the request finishes.
const EstimatedServiceDuration = 3 * time.Second

// Work is what a request is expected to cost: InitialSeats while it runs,
// then FinalSeats for AdditionalLatency after (the watch notifications a
// write causes). The request holds the wider of the two from dispatch
// until the end of AdditionalLatency, as kube's does.
type Work struct {
	InitialSeats, FinalSeats int
	AdditionalLatency        time.Duration
}

// MaxSeats is the seats the request holds.
func (w Work) MaxSeats() int { return max(w.InitialSeats, w.FinalSeats, 1) }

// total is the work in seat-seconds, the unit of virtual time.
func (w Work) total() float64 {
	return float64(max(w.InitialSeats, 1))*EstimatedServiceDuration.Seconds() +
		float64(w.FinalSeats)*w.AdditionalLatency.Seconds()
}

// Config is the queuing of a priority level. Queues == 0 is a level that
// rejects what it cannot serve at once (limitResponse Reject).
type Config struct {
	Queues, HandSize, QueueLengthLimit int
}

// Errors of Start: why a request is refused, in kube's words (the reason
// label of apiserver_flowcontrol_rejected_requests_total).
var (
	ErrQueueFull        = errors.New("queue-full")
	ErrConcurrencyLimit = errors.New("concurrency-limit")
	ErrTimeout          = errors.New("time-out")
	ErrCancelled        = errors.New("cancelled")
)

// QueueSet is one priority level's seats and queues. It is safe for
// concurrent use.
type QueueSet struct {
	mu     sync.Mutex
	cfg    Config
	limit  int
	queues []*queue
	dealer dealer

	seatsInUse, executing, waiting int
	// waitingSeats are the seats the waiting requests will hold.
	waitingSeats int
	// virtualTime is kube's R: it grows, in seat-seconds, as fast as each
	// active queue is served when the seats are shared among them.
	virtualTime  float64
	lastRealTime time.Time
	// robin is where the search for the next queue starts, so that ties
	// go round.
	robin int
	// demand is the high watermark of the seats in use or asked for
	// since it was last taken (borrowing between levels).
	demand int
}

type queue struct {
	index    int
	requests []*Request
	// nextDispatchR is the virtual time at which the queue's head may
	// start: the finish of what the queue was given before.
	nextDispatchR        float64
	executing, seatsUsed int
	waitingSeats         int
	// waitingWork is the total work of requests, in seat-seconds.
	waitingWork float64
}

// Request is one request given to a QueueSet: it waits in a queue until
// dispatched, then holds its seats until Finish.
type Request struct {
	qs      *QueueSet
	queue   *queue // nil for a level without queues
	work    Work
	arrived time.Time
	started time.Time
	// Descr describes the request in the dumps.
	Descr Descr

	// ready is closed once the request is dispatched (started is set)
	// or refused after waiting (the queues it was in went away).
	ready    chan struct{}
	decided  bool // under qs.mu: dispatched, refused or given up
	finished bool
}

// Descr is what the dumps tell of a request.
type Descr struct {
	FlowSchema, Distinguisher string
	// Details are kube's dump_requests?includeRequestDetails columns
	// (user, verb, path, namespace, name, version, resource,
	// subresource).
	Details []string
}

// New returns a QueueSet of limit seats.
func New(cfg Config, limit int) *QueueSet {
	qs := &QueueSet{lastRealTime: time.Now()}
	qs.configureLocked(cfg, limit)
	return qs
}

// Configure changes the queuing and the limit. Waiting requests stay in
// their queues when the number of queues is kept; otherwise they are
// spread again by the new sharding as they are found (kube instead
// drains old queues; the difference is only who goes first).
func (qs *QueueSet) Configure(cfg Config, limit int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.configureLocked(cfg, limit)
	qs.dispatchLocked()
}

func (qs *QueueSet) configureLocked(cfg Config, limit int) {
	qs.limit = limit
	if cfg.Queues == qs.cfg.Queues && qs.queues != nil {
		qs.cfg = cfg
		qs.dealer = newDealer(cfg.Queues, cfg.HandSize)
		return
	}
	old := qs.queues
	qs.cfg = cfg
	qs.dealer = newDealer(cfg.Queues, cfg.HandSize)
	qs.queues = make([]*queue, cfg.Queues)
	for i := range qs.queues {
		qs.queues[i] = &queue{index: i, nextDispatchR: qs.virtualTime}
	}
	// Requests of dropped queues go to queue i mod n: their flows'
	// hashes are gone, and they wait no longer than they would have.
	for _, q := range old {
		for _, r := range q.requests {
			qs.waiting--
			qs.waitingSeats -= r.work.MaxSeats()
			if len(qs.queues) == 0 { // now a level that rejects
				r.decided = true
				close(r.ready)
				continue
			}
			nq := qs.queues[q.index%len(qs.queues)]
			r.queue = nq
			qs.enqueueLocked(nq, r)
		}
	}
}

// SetLimit changes the seats of the level (borrowing), dispatching what
// now fits.
func (qs *QueueSet) SetLimit(limit int) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.limit = limit
	qs.dispatchLocked()
}

// Limit is the level's current number of seats.
func (qs *QueueSet) Limit() int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.limit
}

// TakeDemand returns the most seats held or asked for at once since it
// was last called, and starts a new period.
func (qs *QueueSet) TakeDemand() int {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	d := qs.demand
	qs.demand = qs.seatsInUse + qs.waitingSeats
	return d
}

// Start admits a request of the flow whose hash is flow: it returns once
// the request may run (the caller must then call Finish), or with one of
// the errors above when it is refused, at once (ErrQueueFull,
// ErrConcurrencyLimit) or when ctx ends while it waits (ErrTimeout when
// ctx's deadline passed, else ErrCancelled).
func (qs *QueueSet) Start(ctx context.Context, flow uint64, work Work, descr Descr) (*Request, error) {
	r := &Request{qs: qs, work: work, arrived: time.Now(), Descr: descr, ready: make(chan struct{})}
	qs.mu.Lock()
	qs.syncTimeLocked()
	if len(qs.queues) == 0 {
		defer qs.mu.Unlock()
		if !qs.fitsLocked(work.MaxSeats()) {
			return nil, ErrConcurrencyLimit
		}
		qs.startLocked(r)
		return r, nil
	}
	q := qs.queues[qs.shardLocked(flow)]
	if qs.seatsInUse >= qs.limit && len(q.requests) >= qs.cfg.QueueLengthLimit {
		qs.mu.Unlock()
		return nil, ErrQueueFull
	}
	r.queue = q
	qs.enqueueLocked(q, r)
	qs.dispatchLocked()
	qs.mu.Unlock()

	select {
	case <-r.ready:
		if r.started.IsZero() {
			return nil, ErrConcurrencyLimit
		}
		return r, nil
	case <-ctx.Done():
	}
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if r.decided {
		if !r.started.IsZero() {
			return r, nil // dispatched as ctx ended: the seats are ours
		}
		return nil, ErrConcurrencyLimit
	}
	qs.removeLocked(r)
	qs.dispatchLocked() // a wide head that gave up may unblock others
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, ErrTimeout
	}
	return nil, ErrCancelled
}

// Wait is how long the request waited in its queue.
func (r *Request) Wait() time.Duration { return r.started.Sub(r.arrived) }

// Finish gives back the request's seats, after its additional latency
// when it has final seats. It may be called more than once.
func (r *Request) Finish() {
	qs := r.qs
	qs.mu.Lock()
	if r.finished {
		qs.mu.Unlock()
		return
	}
	r.finished = true
	qs.mu.Unlock()
	if r.work.FinalSeats > 0 && r.work.AdditionalLatency > 0 {
		time.AfterFunc(r.work.AdditionalLatency, r.release)
		return
	}
	r.release()
}

func (r *Request) release() {
	qs := r.qs
	qs.mu.Lock()
	defer qs.mu.Unlock()
	qs.syncTimeLocked()
	seats := r.work.MaxSeats()
	qs.seatsInUse -= seats
	qs.executing--
	if q := r.queue; q != nil {
		q.seatsUsed -= seats
		q.executing--
		// The queue was charged the estimated service time: it gets back
		// what the request did not use (or pays what it overran).
		ran := time.Since(r.started) - r.work.AdditionalLatency
		q.nextDispatchR -= float64(max(r.work.InitialSeats, 1)) * (EstimatedServiceDuration - ran).Seconds()
	}
	qs.dispatchLocked()
}

// syncTimeLocked advances virtual time to now: at the rate each active
// queue is served, the seats asked for (at most the limit) shared by
// the queues with requests waiting or running.
func (qs *QueueSet) syncTimeLocked() {
	now := time.Now()
	elapsed := now.Sub(qs.lastRealTime).Seconds()
	qs.lastRealTime = now
	active := 0
	for _, q := range qs.queues {
		if len(q.requests) > 0 || q.executing > 0 {
			active++
		}
	}
	asked := qs.seatsInUse + qs.waitingSeats
	if active == 0 || elapsed <= 0 {
		return
	}
	qs.virtualTime += elapsed * math.Min(float64(asked), float64(qs.limit)) / float64(active)
}

// shardLocked picks, among the queues the flow's hand deals, the one
// with the least work waiting (the first dealt on a tie).
func (qs *QueueSet) shardLocked(flow uint64) int {
	best, bestWork := -1, math.Inf(1)
	qs.dealer.deal(flow, func(i int) {
		if w := qs.queues[i].waitingWork; w < bestWork {
			best, bestWork = i, w
		}
	})
	return best
}

func (qs *QueueSet) enqueueLocked(q *queue, r *Request) {
	if len(q.requests) == 0 && q.executing == 0 {
		// An idle queue starts now, not where it stopped: idleness
		// earns no credit.
		q.nextDispatchR = math.Max(q.nextDispatchR, qs.virtualTime)
	}
	q.requests = append(q.requests, r)
	q.waitingWork += r.work.total()
	q.waitingSeats += r.work.MaxSeats()
	qs.waiting++
	qs.waitingSeats += r.work.MaxSeats()
	qs.noteDemandLocked()
}

// removeLocked takes a request that gave up out of its queue.
func (qs *QueueSet) removeLocked(r *Request) {
	r.decided = true
	q := r.queue
	for i, x := range q.requests {
		if x == r {
			q.requests = append(q.requests[:i:i], q.requests[i+1:]...)
			q.waitingWork -= r.work.total()
			q.waitingSeats -= r.work.MaxSeats()
			qs.waiting--
			qs.waitingSeats -= r.work.MaxSeats()
			return
		}
	}
}

// fitsLocked reports whether seats more can run now. A request wider
// than the whole limit runs alone, once nothing else does.
func (qs *QueueSet) fitsLocked(seats int) bool {
	if seats > qs.limit {
		return qs.executing == 0
	}
	return qs.seatsInUse+seats <= qs.limit
}

// dispatchLocked starts waiting requests while their seats are free,
// each time from the queue whose head would finish first in virtual
// time. When that head does not fit, nothing starts: a wide request is
// not overtaken forever by narrow ones.
func (qs *QueueSet) dispatchLocked() {
	for qs.waiting > 0 {
		q := qs.nextQueueLocked()
		if q == nil || !qs.fitsLocked(q.requests[0].work.MaxSeats()) {
			return
		}
		r := q.requests[0]
		qs.robin = q.index
		q.requests[0] = nil
		q.requests = q.requests[1:]
		q.waitingWork -= r.work.total()
		q.waitingSeats -= r.work.MaxSeats()
		qs.waiting--
		qs.waitingSeats -= r.work.MaxSeats()
		q.nextDispatchR += r.work.total()
		qs.startLocked(r)
		close(r.ready)
	}
}

// nextQueueLocked is the queue whose head has the least virtual finish
// time; the search starts after the last queue served from, so ties
// rotate.
func (qs *QueueSet) nextQueueLocked() *queue {
	var best *queue
	bestFinish := math.Inf(1)
	n := len(qs.queues)
	for k := 1; k <= n; k++ {
		q := qs.queues[(qs.robin+k)%n]
		if len(q.requests) == 0 {
			continue
		}
		if f := q.nextDispatchR + q.requests[0].work.total(); f < bestFinish {
			best, bestFinish = q, f
		}
	}
	return best
}

func (qs *QueueSet) startLocked(r *Request) {
	r.decided = true
	r.started = time.Now()
	seats := r.work.MaxSeats()
	qs.seatsInUse += seats
	qs.executing++
	if r.queue != nil {
		r.queue.seatsUsed += seats
		r.queue.executing++
	}
	qs.noteDemandLocked()
}

func (qs *QueueSet) noteDemandLocked() {
	qs.demand = max(qs.demand, qs.seatsInUse+qs.waitingSeats)
}
