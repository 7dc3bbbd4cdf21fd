package cacher

import (
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
// resource, and the revision it has caught up with.
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

func newWatchCache(capacity int, indexFields []string) *watchCache {
	wc := &watchCache{store: newStore(indexFields), history: newHistory(capacity)}
	wc.cond = sync.NewCond(wc.mu.RLocker())
	return wc
}

// replace swaps in the result of a full list at rev: the history restarts
// there.
func (wc *watchCache) replace(entries []*entry, rev int64) {
	s := newStore(indexFieldsOf(wc.store))
	for _, e := range entries {
		s.put(e)
	}
	wc.mu.Lock()
	wc.store = s
	wc.history.reset(rev)
	wc.rv = rev
	wc.mu.Unlock()
	wc.cond.Broadcast()
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
// of the stored entry it removes).
func (wc *watchCache) apply(typ watch.EventType, cur *entry, now time.Time) *event {
	wc.mu.Lock()
	ev := &event{typ: typ, key: cur.key(), rv: cur.obj.ResourceVersion, recordTime: now}
	switch typ {
	case watch.Deleted:
		prev, ok := wc.store.remove(ev.key)
		if ok {
			// The deleted state has the stored entry's attributes.
			cur = &entry{obj: cur.obj, labels: prev.labels, fields: prev.fields}
			ev.prev = prev
		}
	default:
		prev, ok := wc.store.put(cur)
		if ok {
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

func (wc *watchCache) resourceVersion() int64 {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.rv
}

// waitUntilFreshLocked waits, holding mu.RLock, until the cache has seen
// rev or ctx ends (then it returns ctx's error, the lock still held).
func (wc *watchCache) waitUntilFreshLocked(ctx context.Context, rev int64) error {
	if wc.rv >= rev {
		return nil
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
			return err
		}
		wc.cond.Wait()
	}
	return nil
}

// snapshot returns a read-only copy of the store and the revision it is at.
func (wc *watchCache) snapshotLocked() (*btree.BTreeG[*entry], int64) {
	return wc.store.snapshot(), wc.rv
}

func (wc *watchCache) historyCapacity() int {
	wc.mu.RLock()
	defer wc.mu.RUnlock()
	return wc.history.capacity()
}
