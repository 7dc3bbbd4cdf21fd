package cacher

import (
	"context"
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

	// A watch that must start from a fresh state whose revision the cache
	// does not reach ends with that error at once.
	var notFresh error
	if sendInitial != nil && *sendInitial {
		required := rev
		if opts.ResourceVersion == "" {
			if required, err = c.storage.CurrentResourceVersion(ctx); err != nil {
				return nil, err
			}
		}
		notFresh = c.waitUntilFresh(ctx, required)
	}

	sel := c.selection(key, !opts.Recursive, opts.Predicate)
	w := newCacheWatcher(sel.prefix, sel.single, opts.Predicate, opts.ProgressNotify, watchChanSize)
	if sel.field != "" {
		w.trigger, w.triggered = sel.value, true
		w.input = make(chan *event, triggeredChanSize)
	}
	w.scope = scopeOf(c.relKey(sel.prefix))
	if deadline, ok := ctx.Deadline(); ok {
		w.deadline = deadline
	}
	init := initial{err: notFresh}
	if notFresh == nil {
		start := fromRevision
		switch {
		case withState:
			start = fromState
		case sendInitial != nil && rev == 0: // sendInitialEvents=false
			start = fromNow
		}
		// Registered while the cache cannot change: every change from
		// now on is dispatched to w, those before are in init.
		if init, err = c.wc.startWatch(sel, start, rev, func() { c.dispatcher.add(w, time.Now()) }); err != nil {
			init.err = err
		}
		init.endMarker = withState && sendInitial != nil && *sendInitial && opts.ProgressNotify
	}
	// The watcher's goroutine starts when its consumer first reads.
	w.ctx, w.init = ctx, init
	return w, nil
}
