package cacher

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// dispatcher hands events to the watchers of one resource. It visits only
// the watchers an event may concern: those of the whole resource, of the
// event's namespace, of the object itself, and those selecting on the
// object's value of the indexed trigger field.
type dispatcher struct {
	mu sync.Mutex
	// byScope: scope ("" for all, "ns", "ns/name" or "name") -> id ->
	// watcher.
	byScope map[string]map[int]*cacheWatcher
	// byTrigger: value of the trigger field -> id -> watcher.
	byTrigger map[string]map[int]*cacheWatcher
	nextID    int
	count     int

	budget            *timeBudget
	bookmarkFrequency time.Duration
	metrics           *resourceMetrics

	candidates []*cacheWatcher // reused between dispatches
	blocked    []*cacheWatcher
}

func newDispatcher(bookmarkFrequency time.Duration, m *resourceMetrics) *dispatcher {
	return &dispatcher{
		byScope:           map[string]map[int]*cacheWatcher{},
		byTrigger:         map[string]map[int]*cacheWatcher{},
		budget:            newTimeBudget(),
		bookmarkFrequency: bookmarkFrequency,
		metrics:           m,
	}
}

// add registers w; from now on it receives every dispatched event.
func (d *dispatcher) add(w *cacheWatcher, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w.id = d.nextID
	d.nextID++
	set := d.byScope
	key := w.scope
	if w.triggered {
		set, key = d.byTrigger, w.trigger
	}
	m := set[key]
	if m == nil {
		m = map[int]*cacheWatcher{}
		set[key] = m
	}
	m[w.id] = w
	d.count++
	d.metrics.registeredWatchers.Set(float64(d.count))
	w.nextBookmark = d.nextBookmarkTime(w, now)
	w.forget = func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.removeLocked(w)
	}
}

func (d *dispatcher) removeLocked(w *cacheWatcher) {
	set, key := d.byScope, w.scope
	if w.triggered {
		set, key = d.byTrigger, w.trigger
	}
	if m := set[key]; m != nil {
		if _, ok := m[w.id]; ok {
			delete(m, w.id)
			d.count--
			d.metrics.registeredWatchers.Set(float64(d.count))
		}
		if len(m) == 0 {
			delete(set, key)
		}
	}
}

// dispatch offers ev to every watcher it may concern. A watcher whose
// buffer is full gets a share of a small time budget to make room; one
// that still has no room is terminated (its client starts again).
func (d *dispatcher) dispatch(ev *event, relKey func(string) string, trigger func(*entry) (string, bool)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.candidates = d.collectLocked(ev, relKey, trigger, d.candidates[:0])
	d.blocked = d.blocked[:0]
	for _, w := range d.candidates {
		if !w.nonblockingAdd(ev) {
			d.blocked = append(d.blocked, w)
		}
	}
	if len(d.blocked) > 0 {
		start := time.Now()
		budget := d.budget.take(start)
		timer := time.NewTimer(budget)
		fired := false
		for _, w := range d.blocked {
			if !fired && w.add(ev, timer.C) {
				continue
			}
			if fired && w.nonblockingAdd(ev) {
				continue
			}
			fired = true
			d.removeLocked(w)
			w.terminate()
			d.metrics.terminatedWatchers.Inc()
		}
		timer.Stop()
		d.budget.giveBack(budget-time.Since(start), time.Now())
	}
	clear(d.candidates)
	clear(d.blocked)
}

// collectLocked appends the watchers ev may concern to out.
func (d *dispatcher) collectLocked(ev *event, relKey func(string) string, trigger func(*entry) (string, bool), out []*cacheWatcher) []*cacheWatcher {
	appendAll := func(m map[int]*cacheWatcher) {
		for _, w := range m {
			out = append(out, w)
		}
	}
	appendAll(d.byScope[""])
	rel := relKey(ev.key)
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			appendAll(d.byScope[rel[:i]])
		}
	}
	appendAll(d.byScope[rel])
	if len(d.byTrigger) > 0 {
		curValue, ok := trigger(ev.cur)
		if ok {
			appendAll(d.byTrigger[curValue])
		}
		if ev.prev != nil {
			if prevValue, ok := trigger(ev.prev); ok && prevValue != curValue {
				appendAll(d.byTrigger[prevValue])
			}
		}
	}
	return out
}

// bookmarks sends a bookmark at rv to every watcher that asked for them
// and is due one (never blocking: a watcher with no room skips it).
func (d *dispatcher) bookmarks(rv int64, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ev := &event{typ: watch.Bookmark, rv: rv}
	visit := func(m map[string]map[int]*cacheWatcher) {
		for _, ws := range m {
			for _, w := range ws {
				if w.bookmarks && !now.Before(w.nextBookmark) {
					if w.nonblockingAdd(ev) {
						w.nextBookmark = d.nextBookmarkTime(w, now)
					}
				}
			}
		}
	}
	visit(d.byScope)
	visit(d.byTrigger)
}

// bookmarksDue reports whether some watcher is due a bookmark by then.
func (d *dispatcher) bookmarksDue(by time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, set := range []map[string]map[int]*cacheWatcher{d.byScope, d.byTrigger} {
		for _, ws := range set {
			for _, w := range ws {
				if w.bookmarks && !by.Before(w.nextBookmark) {
					return true
				}
			}
		}
	}
	return false
}

// nextBookmarkTime: every bookmarkFrequency, and once shortly before the
// watch's deadline so a client about to reconnect has a fresh revision.
func (d *dispatcher) nextBookmarkTime(w *cacheWatcher, now time.Time) time.Time {
	next := now.Add(d.bookmarkFrequency)
	if !w.deadline.IsZero() {
		if beforeDeadline := w.deadline.Add(-2 * time.Second); beforeDeadline.After(now) && beforeDeadline.Before(next) {
			next = beforeDeadline
		}
	}
	return next
}

// terminateAll ends every watch (after a re-list their history is gone).
func (d *dispatcher) terminateAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, set := range []map[string]map[int]*cacheWatcher{d.byScope, d.byTrigger} {
		for key, ws := range set {
			for _, w := range ws {
				w.terminate()
			}
			delete(set, key)
		}
	}
	d.count = 0
	d.metrics.registeredWatchers.Set(0)
}

// hasBookmarkWatchers is cheap enough to ask every tick.
func (d *dispatcher) watcherCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// timeBudget is the time the dispatcher may spend waiting on slow
// watchers: up to maxBudget, refilled at maxBudget per second. Shared by
// all dispatches so that a slow watcher cannot stall delivery for long.
type timeBudget struct {
	available time.Duration
	last      time.Time
}

const maxBudget = 100 * time.Millisecond

func newTimeBudget() *timeBudget { return &timeBudget{available: maxBudget} }

func (b *timeBudget) refill(now time.Time) {
	if !b.last.IsZero() {
		b.available += now.Sub(b.last) / 10 // 100ms per second
	}
	b.last = now
	if b.available > maxBudget {
		b.available = maxBudget
	}
}

func (b *timeBudget) take(now time.Time) time.Duration {
	b.refill(now)
	t := b.available
	b.available = 0
	return t
}

func (b *timeBudget) giveBack(unused time.Duration, now time.Time) {
	b.refill(now)
	if unused > 0 {
		b.available = min(b.available+unused, maxBudget)
	}
}

// scopeOf is the dispatcher scope of a watch key relative to the
// resource prefix: "" for the whole resource, else the namespace or the
// object key without its trailing slash.
func scopeOf(rel string) string { return strings.TrimSuffix(rel, "/") }
