package cacher

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/google/btree"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// event is one change as the cache records it, shared by every watcher it
// reaches. Its objects are Shareable, so an encoding computed for one
// watcher serves all.
type event struct {
	typ watch.EventType // Added, Modified or Deleted
	key string
	rv  int64
	// cur is the new state (Added, Modified) or the last state at the
	// deletion's revision (Deleted).
	cur *entry
	// prev is the state before, nil for Added.
	prev       *entry
	recordTime time.Time

	prevAtRVOnce sync.Once
	prevAtRV     *storage.Object
}

// prevObjectAtRV is the previous state carrying this event's revision: the
// object a watcher receives as DELETED when the change takes it out of its
// selector. Built once for all watchers.
func (e *event) prevObjectAtRV() *storage.Object {
	e.prevAtRVOnce.Do(func() { e.prevAtRV = e.prev.obj.WithResourceVersion(e.rv).Shareable() })
	return e.prevAtRV
}

// watchCache holds the current objects and the recent history of one
// resource, and the revision it has caught up with. Its lock guards all
// three and is taken here only: the reflector's goroutine changes them
// (replace, apply, progress, compact) and readers get consistent views
// through the methods below (get, view, snapshot, waitUntilFresh,
// startWatch), never the fields themselves.
type watchCache struct {
	mu sync.RWMutex
	// cond is broadcast whenever rv moves; waiters hold mu.RLock.
	cond *sync.Cond

	store   *store
	history *history
	// rv is the revision up to which the cache has seen every change (the
	// last event, or a progress notification).
	rv int64
}

func newWatchCache(capacity int, historyBytes int64, indexFields []string) *watchCache {
	wc := &watchCache{store: newStore(indexFields), history: newHistory(capacity, historyBytes)}
	wc.cond = sync.NewCond(wc.mu.RLocker())
	return wc
}

// size is the number and encoded size of the objects held.
func (wc *watchCache) size() (count, bytes int64) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return int64(wc.store.len()), wc.store.bytes
}

// replace swaps in the result of a full list at rev: the history restarts
// there.
func (wc *watchCache) replace(entries []*entry, rev int64) {
	s := newStore(indexFieldsOf(wc.store))
	for _, e := range entries {
		s.put(e)
	}
	wc.mu.Lock()
	old := wc.store
	wc.store = s
	wc.history.reset(rev)
	wc.rv = rev
	wc.mu.Unlock()
	wc.cond.Broadcast()
	old.forget()
}

func indexFieldsOf(s *store) []string {
	fields := make([]string, 0, len(s.indexes))
	for f := range s.indexes {
		fields = append(fields, f)
	}
	return fields
}

// apply records a change and returns the event to dispatch. cur is the new
// entry; for a deletion it is the last state (whose attributes are those
// of the stored entry it removes), or only the key and revision. It returns
// nil for the deletion of a key the cache does not hold, reported by key.
func (wc *watchCache) apply(typ watch.EventType, cur *entry, now time.Time) *event {
	wc.mu.Lock()
	ev := &event{typ: typ, key: cur.key(), rv: cur.obj.ResourceVersion, recordTime: now}
	switch typ {
	case watch.Deleted:
		prev, ok := wc.store.remove(ev.key)
		if !ok && cur.obj.Data() == nil {
			// Nothing is known of a key this cache never held (the store
			// reports deletions by key only): there is nothing to tell.
			wc.rv = ev.rv
			wc.mu.Unlock()
			wc.cond.Broadcast()
			return nil
		}
		if ok {
			prev.obj.Forget()
			// The deleted state is the stored entry, with its attributes
			// and its bytes: the store reports a deletion by its key, or
			// sends its own copy of the last state, which the history
			// would otherwise hold beside the stored entry's.
			obj := cur.obj
			if obj.Data() == nil || bytes.Equal(obj.Data(), prev.obj.Data()) {
				obj = prev.obj.WithResourceVersion(obj.ResourceVersion)
			}
			cur = &entry{obj: obj, labels: prev.labels, fields: prev.fields}
			ev.prev = prev
		}
	default:
		prev, ok := wc.store.put(cur)
		if ok {
			prev.obj.Forget()
			ev.prev = prev
			ev.typ = watch.Modified
		} else {
			ev.typ = watch.Added
		}
	}
	ev.cur = &entry{obj: cur.obj.Shareable(), labels: cur.labels, fields: cur.fields}
	wc.history.add(ev)
	wc.rv = ev.rv
	wc.mu.Unlock()
	wc.cond.Broadcast()
	return ev
}

// progress records that every change up to rev has been seen.
func (wc *watchCache) progress(rev int64) {
	wc.mu.Lock()
	advanced := rev > wc.rv
	if advanced {
		wc.rv = rev
	}
	wc.mu.Unlock()
	if advanced {
		wc.cond.Broadcast()
	}
}

// compact drops the history etcd compacted away.
func (wc *watchCache) compact(rev int64) {
	wc.mu.Lock()
	wc.history.compact(rev)
	wc.mu.Unlock()
}

// oldestRevision is the revision after which the history is complete.
func (wc *watchCache) oldestRevision() int64 {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.history.oldestRV
}

func (wc *watchCache) resourceVersion() int64 {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.rv
}

func (wc *watchCache) historyCapacity() int {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.history.capacity()
}

// get returns the cached entry at key.
func (wc *watchCache) get(key string) (*entry, bool) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.store.get(key)
}

// waitUntilFresh waits until the cache has seen rev, or ctx ends (then
// it returns ctx's error). It returns the revision the cache has reached.
func (wc *watchCache) waitUntilFresh(ctx context.Context, rev int64) (int64, error) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	if wc.rv >= rev {
		return wc.rv, nil
	}
	// The condition is re-checked when rv moves and when ctx ends.
	stop := context.AfterFunc(ctx, func() {
		// The write lock waits for the waiter to be inside Wait, so the
		// broadcast cannot slip between its check and its sleep.
		wc.mu.Lock()
		wc.mu.Unlock()
		wc.cond.Broadcast()
	})
	defer stop()
	for wc.rv < rev {
		if err := ctx.Err(); err != nil {
			return wc.rv, err
		}
		wc.cond.Wait()
	}
	return wc.rv, nil
}

// snapshot returns a read-only copy of the store (O(1), copy on write)
// and the revision it is at.
func (wc *watchCache) snapshot() (*btree.BTreeG[*entry], int64) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.store.snapshot(), wc.rv
}

// selection says which entries a reader may want: the one at key prefix
// (single), those under prefix whose indexed field has value, or all
// under prefix.
type selection struct {
	prefix string
	single bool
	// field is an indexed field the reader pins to value ("" for none).
	field, value string
}

// view is the state a reader gets at one revision: the few entries it
// may select (one key, or an index's), or a snapshot of the whole store
// to read under prefix, outside the lock.
type view struct {
	rv      int64
	entries []*entry
	tree    *btree.BTreeG[*entry]
	prefix  string
}

// each calls fn on the view's entries in key order, until fn returns false.
func (v *view) each(fn func(*entry) bool) {
	if v.tree != nil {
		ascendPrefix(v.tree, v.prefix, fn)
		return
	}
	for _, e := range v.entries {
		if !fn(e) {
			return
		}
	}
}

// view returns the current state of what sel selects.
func (wc *watchCache) view(sel selection) view {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.viewLocked(sel)
}

func (wc *watchCache) viewLocked(sel selection) view {
	v := view{rv: wc.rv}
	switch {
	case sel.single:
		if e, ok := wc.store.get(sel.prefix); ok {
			v.entries = []*entry{e}
		}
	case sel.field != "":
		v.entries, _ = wc.store.indexed(sel.field, sel.value, sel.prefix)
	default:
		v.tree, v.prefix = wc.store.snapshot(), sel.prefix
	}
	return v
}

// watchStart is where a new watch starts.
type watchStart int

const (
	// fromState: the current state as ADDED, then every change after it.
	fromState watchStart = iota
	// fromNow: the changes after the current revision.
	fromNow
	// fromRevision: the changes after a given revision, from the history.
	fromRevision
)

// startWatch works out what a new watch of sel delivers before live
// events: the current state, or the history after rev (an Expired error
// when the history no longer reaches back there). Unless it fails, it
// calls register with the lock held: every change applied later reaches
// the watcher live, every earlier one is in what it returns.
func (wc *watchCache) startWatch(sel selection, start watchStart, rev int64, register func()) (initial, error) {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	var init initial
	switch start {
	case fromState:
		init.state = wc.viewLocked(sel)
		init.fromRV = wc.rv
	case fromNow:
		init.fromRV = wc.rv
	case fromRevision:
		events, ok := wc.history.since(rev)
		if !ok {
			return init, storage.NewExpiredError(rev, wc.history.oldestRV)
		}
		init.history, init.fromRV = events, rev
	}
	register()
	return init, nil
}
