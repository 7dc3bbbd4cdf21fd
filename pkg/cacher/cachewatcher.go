package cacher

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// cacheWatcher is one client's watch. The dispatcher puts events in its
// input buffer without blocking (or, within a small shared time budget,
// blocking briefly). A goroutine of its own (process) delivers the initial
// events on result; live events are then filtered and converted either by
// that goroutine, for a consumer of ResultChan, or by the consumer's own
// goroutine in Next, which saves a handoff per event. A watcher that
// cannot keep up is stopped, and its client starts again from its last
// resourceVersion.
type cacheWatcher struct {
	input  chan *event
	result chan storage.Event
	done   chan struct{}

	// process starts when the consumer first asks for an event, knowing
	// by then which way it reads (pull: Next). ctx and init are its
	// arguments, kept until then.
	startOnce sync.Once
	pull      bool
	ctx       context.Context
	init      initial
	// Set by process before it closes result when it leaves the live
	// events to a pulling consumer: last is the revision delivered so
	// far. The consumer reads them once result is closed.
	handedOff bool
	last      int64
	// live: the pulling consumer reads input itself (its own field).
	live bool

	prefix    string // key prefix (a namespace's), or the exact key when single
	single    bool
	pred      storage.SelectionPredicate
	bookmarks bool

	stopOnce sync.Once
	// forget unregisters the watcher from the dispatcher; set when it is
	// registered.
	forget func()

	// Guarded by the dispatcher's lock.
	id           int
	scope        string // key relative to the resource prefix ("" for all)
	trigger      string // the indexed field value it selects on, if any
	triggered    bool
	nextBookmark time.Time
	deadline     time.Time // zero: none
}

// resultChanSize lets a watcher hand a burst of events to its client's
// writer without a handoff per event; the writer flushes once it has
// drained them.
const resultChanSize = 16

func newCacheWatcher(prefix string, single bool, pred storage.SelectionPredicate, bookmarks bool, chanSize int) *cacheWatcher {
	return &cacheWatcher{
		input:     make(chan *event, chanSize),
		result:    make(chan storage.Event, resultChanSize),
		done:      make(chan struct{}),
		prefix:    prefix,
		single:    single,
		pred:      pred,
		bookmarks: bookmarks,
	}
}

// ResultChan implements storage.Watcher.
func (w *cacheWatcher) ResultChan() <-chan storage.Event {
	w.begin(false)
	return w.result
}

// begin starts the watcher's goroutine once, for a consumer that pulls
// (Next) or reads ResultChan.
func (w *cacheWatcher) begin(pull bool) {
	w.startOnce.Do(func() {
		w.pull = pull
		ctx, init := w.ctx, w.init
		w.ctx, w.init = nil, initial{}
		go w.process(ctx, init)
	})
}

// Next implements storage.Puller. The initial events come from result;
// once process has handed off (result closed with handedOff set), live
// events are taken from input and converted here, exactly as process
// would: in order, those at or before the last delivered revision
// skipped.
func (w *cacheWatcher) Next(ctx context.Context, wait bool) (storage.Event, storage.NextStatus) {
	w.begin(true)
	for !w.live {
		ev, ok, status := receive(ctx, w.result, nil, wait)
		switch {
		case status != storage.Got:
			return storage.Event{}, status
		case ok:
			return ev, storage.Got
		case !w.handedOff:
			return storage.Event{}, storage.Ended
		}
		w.live = true
	}
	for {
		ev, ok, status := receive(ctx, w.input, w.done, wait)
		if status != storage.Got {
			return storage.Event{}, status
		}
		if !ok || ev.rv <= w.last {
			continue
		}
		out, ok := w.convert(ev)
		w.last = ev.rv
		if ok {
			return out, storage.Got
		}
	}
}

// receive takes a value from ch: waiting (until ctx or done ends it) or
// not. ok is false when ch is closed.
func receive[T any](ctx context.Context, ch <-chan T, done <-chan struct{}, wait bool) (v T, ok bool, status storage.NextStatus) {
	if !wait {
		select {
		case v, ok = <-ch:
			return v, ok, storage.Got
		case <-done:
			return v, false, storage.Ended
		default:
			return v, false, storage.Pending
		}
	}
	select {
	case v, ok = <-ch:
		return v, ok, storage.Got
	case <-done:
		return v, false, storage.Ended
	case <-ctx.Done():
		return v, false, storage.Ended
	}
}

// Stop implements storage.Watcher: the client is done.
func (w *cacheWatcher) Stop() { w.stop() }

// stop ends the watch and unregisters it.
func (w *cacheWatcher) stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		if w.forget != nil {
			w.forget()
		}
	})
}

// terminate ends the watch when the dispatcher, holding its lock, has
// already unregistered it.
func (w *cacheWatcher) terminate() {
	w.stopOnce.Do(func() { close(w.done) })
}

// nonblockingAdd queues ev if there is room.
func (w *cacheWatcher) nonblockingAdd(ev *event) bool {
	select {
	case w.input <- ev:
		return true
	default:
		return false
	}
}

// add queues ev, waiting until timer fires at the latest. It reports false
// when the watcher is too slow (or gone).
func (w *cacheWatcher) add(ev *event, timer <-chan time.Time) bool {
	select {
	case w.input <- ev:
		return true
	case <-w.done:
		return true // stopped meanwhile: nothing to deliver
	case <-timer:
		return false
	}
}

// matches reports whether an entry is one this watcher selects.
func (w *cacheWatcher) matches(e *entry) bool {
	if e == nil {
		return false
	}
	if w.single {
		if e.key() != w.prefix {
			return false
		}
	} else if !strings.HasPrefix(e.key(), w.prefix) {
		return false
	}
	return w.pred.MatchesAttrs(&e.labels, &e.fields)
}

// convert turns a cache event into what this watcher reports: an object
// that enters its selector is ADDED, one that leaves is DELETED.
func (w *cacheWatcher) convert(ev *event) (storage.Event, bool) {
	switch ev.typ {
	case watch.Added:
		if w.matches(ev.cur) {
			return storage.Event{Type: watch.Added, Object: ev.cur.obj}, true
		}
	case watch.Deleted:
		if w.matches(ev.cur) {
			return storage.Event{Type: watch.Deleted, Object: ev.cur.obj}, true
		}
	case watch.Modified:
		cur, prev := w.matches(ev.cur), w.matches(ev.prev)
		switch {
		case cur && prev:
			return storage.Event{Type: watch.Modified, Object: ev.cur.obj}, true
		case cur:
			return storage.Event{Type: watch.Added, Object: ev.cur.obj}, true
		case prev:
			return storage.Event{Type: watch.Deleted, Object: ev.prevObjectAtRV()}, true
		}
	case watch.Bookmark:
		if w.bookmarks {
			return storage.Event{Type: watch.Bookmark, ResourceVersion: ev.rv}, true
		}
	}
	return storage.Event{}, false
}

// initial is what a watcher delivers before live events: the current state
// (for watches that start with it), an optional bookmark ending it, and the
// history after the state's revision.
type initial struct {
	state     view // empty for a watch that does not start with it
	endMarker bool
	history   []*event
	// fromRV: events at or before it are not delivered (they are in the
	// state, or before the revision the client asked for).
	fromRV int64
	err    error
}

// process delivers the initial events, then live ones (or, for a pulling
// consumer, hands the live ones over), until the watcher stops or ctx
// ends. It owns result and closes it.
func (w *cacheWatcher) process(ctx context.Context, init initial) {
	defer close(w.result)
	defer func() {
		if !w.handedOff {
			w.stop()
		}
	}()
	if init.err != nil {
		w.send(ctx, storage.Event{Type: watch.Error, Err: init.err})
		return
	}
	sent := true
	addState := func(e *entry) bool {
		if w.matches(e) {
			sent = w.send(ctx, storage.Event{Type: watch.Added, Object: e.obj})
		}
		return sent
	}
	init.state.each(addState)
	if !sent {
		return
	}
	if init.endMarker && !w.send(ctx, storage.Event{Type: watch.Bookmark, ResourceVersion: init.state.rv, InitialEventsEnd: true}) {
		return
	}
	last := init.fromRV
	for _, ev := range init.history {
		if ev.rv <= last {
			continue
		}
		if out, ok := w.convert(ev); ok && !w.send(ctx, out) {
			return
		}
		last = ev.rv
	}
	if w.pull {
		// The consumer takes the live events from here; the close of
		// result tells it so.
		w.last, w.handedOff = last, true
		return
	}
	for {
		select {
		case <-w.done:
			return
		case <-ctx.Done():
			return
		case ev := <-w.input:
			// Events already delivered from the history come again from
			// the dispatcher: the revision tells them apart. A bookmark
			// at a revision the client has tells it nothing: skipped, as
			// kube skips it.
			if ev.rv <= last {
				continue
			}
			if out, ok := w.convert(ev); ok && !w.send(ctx, out) {
				return
			}
			last = ev.rv
		}
	}
}

func (w *cacheWatcher) send(ctx context.Context, ev storage.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	case <-ctx.Done():
		return false
	}
}
