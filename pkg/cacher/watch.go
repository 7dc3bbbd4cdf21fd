package cacher

import (
	"context"
	"strings"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Watch channel sizes: a watcher selecting on the trigger field sees few
// events; others may need to absorb a burst.
const (
	triggeredChanSize = 10
	watchChanSize     = 100
)

// Watch implements storage.Interface from the cache, with kube's cached
// semantics:
//   - sendInitialEvents=true: ADDED for the state at a revision not older
//     than resourceVersion ("" meaning etcd's current one), then, if
//     bookmarks are allowed, a BOOKMARK ending them, then live events;
//   - resourceVersion "0" or unset without sendInitialEvents: the current
//     state as ADDED, then live events;
//   - sendInitialEvents=false without resourceVersion: changes from now;
//   - resourceVersion N: every change after N, in order, exactly once; a
//     stream whose only event is a 410 Expired error when N is older than
//     the history.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (storage.Watcher, error) {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if ok, _ := c.ready.check(); !ok {
		return nil, storage.NewNotReadyError(c.resource.Resource)
	}
	sendInitial := opts.SendInitialEvents
	withState := (sendInitial != nil && *sendInitial) || (sendInitial == nil && rev == 0)

	var init initial
	if sendInitial != nil && *sendInitial {
		required := rev
		if opts.ResourceVersion == "" {
			if required, err = c.storage.CurrentResourceVersion(ctx); err != nil {
				return nil, err
			}
		}
		if err := c.waitUntilFresh(ctx, required); err != nil {
			init.err = err
		}
	}

	prefix, single := key, !opts.Recursive
	if !single && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	pred := opts.Predicate
	chanSize := watchChanSize
	w := newCacheWatcher(prefix, single, pred, opts.ProgressNotify, chanSize)
	if value, pinned := pred.FieldValue(c.trigger); c.trigger != "" && pinned {
		w.trigger, w.triggered = value, true
		w.input = make(chan *event, triggeredChanSize)
	}
	w.scope = scopeOf(c.relKey(prefix))
	if deadline, ok := ctx.Deadline(); ok {
		w.deadline = deadline
	}

	c.wc.mu.RLock()
	if init.err == nil {
		switch {
		case withState:
			init.stateRV = c.wc.rv
			init.fromRV = c.wc.rv
			init.endMarker = sendInitial != nil && *sendInitial && opts.ProgressNotify
			c.stateLocked(&init, prefix, single, w)
		case sendInitial != nil && rev == 0: // sendInitialEvents=false: from now
			init.fromRV = c.wc.rv
		default:
			events, ok := c.wc.history.since(rev)
			if !ok {
				init.err = storage.NewExpiredError(rev, c.wc.history.oldestRV)
			}
			init.history, init.fromRV = events, rev
		}
	}
	if init.err == nil {
		// Registered under the cache's lock: every change applied from
		// now on is dispatched to w; those before are in init.
		c.dispatcher.add(w, time.Now())
	}
	c.wc.mu.RUnlock()
	// The watcher's goroutine starts when its consumer first reads.
	w.ctx, w.init = ctx, init
	return w, nil
}

// stateLocked fills the current state a new watcher starts with: the
// entries it may select, or a snapshot of the whole prefix (O(1) to take,
// read by the watcher's own goroutine).
func (c *Cacher) stateLocked(init *initial, prefix string, single bool, w *cacheWatcher) {
	switch {
	case single:
		if e, ok := c.wc.store.get(prefix); ok {
			init.state = []*entry{e}
		}
	case w.triggered:
		init.state, _ = c.wc.store.indexed(c.trigger, w.trigger, prefix)
	default:
		init.tree, init.prefix = c.wc.store.snapshot(), prefix
	}
}
