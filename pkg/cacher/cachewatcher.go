package cacher

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// cacheWatcher is one client's watch. The dispatcher puts events in its
// input buffer without blocking (or, within a small shared time budget,
// blocking briefly); its own goroutine filters and converts them and hands
// them to the client. A watcher that cannot keep up is stopped, and its
// client starts again from its last resourceVersion.
type cacheWatcher struct {
	input  chan *event
	result chan storage.Event
	done   chan struct{}

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
func (w *cacheWatcher) ResultChan() <-chan storage.Event { return w.result }

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
	// The state is either a list of entries or, for a whole prefix, a
	// snapshot of the store read after the lock is released.
	state     []*entry
	tree      *btree.BTreeG[*entry]
	prefix    string
	stateRV   int64
	endMarker bool
	history   []*event
	// fromRV: events at or before it are not delivered (they are in the
	// state, or before the revision the client asked for).
	fromRV int64
	err    error
}

// process delivers the initial events, then live ones, until the watcher
// stops or ctx ends. It owns result and closes it.
func (w *cacheWatcher) process(ctx context.Context, init initial) {
	defer close(w.result)
	defer w.stop()
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
	for _, e := range init.state {
		if !addState(e) {
			return
		}
	}
	if init.tree != nil {
		ascendPrefix(init.tree, init.prefix, addState)
		if !sent {
			return
		}
	}
	if init.endMarker && !w.send(ctx, storage.Event{Type: watch.Bookmark, ResourceVersion: init.stateRV, InitialEventsEnd: true}) {
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
