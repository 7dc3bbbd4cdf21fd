package etcd3

import (
	"context"
	"errors"
	"strings"
	"sync"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// watchChanSize bounds the events queued for a slow reader; the etcd watch
// stream itself buffers the rest.
const watchChanSize = 100

// Watch implements storage.Interface with kube's semantics for a store
// without a cache:
//   - resourceVersion N > 0: every change after N;
//   - resourceVersion 0 or unset, sendInitialEvents unset: ADDED for the
//     current state, then every change after it;
//   - sendInitialEvents=true: the same, then (if opts.ProgressNotify) a
//     BOOKMARK marking the end of the initial events;
//   - sendInitialEvents=false and no resourceVersion: changes from now on.
//
// A compacted start revision ends the stream with an Expired error event.
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (storage.Watcher, error) {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if opts.Recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	if rev == 0 && opts.SendInitialEvents != nil && !*opts.SendInitialEvents {
		// "From now" is now, before Watch returns: a change the caller
		// makes next must be seen.
		if rev, err = s.CurrentResourceVersion(ctx); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{
		store:     s,
		key:       key,
		opts:      opts,
		startRev:  rev,
		ctx:       ctx,
		cancel:    cancel,
		result:    make(chan storage.Event, watchChanSize),
		recursive: opts.Recursive,
	}
	go w.run()
	return w, nil
}

type watcher struct {
	store     *Store
	key       string
	opts      storage.ListOptions
	startRev  int64
	recursive bool

	ctx      context.Context
	cancel   context.CancelFunc
	stopOnce sync.Once
	result   chan storage.Event
}

func (w *watcher) ResultChan() <-chan storage.Event { return w.result }

func (w *watcher) Stop() { w.stopOnce.Do(w.cancel) }

func (w *watcher) run() {
	defer close(w.result)
	defer w.cancel()

	rev := w.startRev
	sendInitial := w.opts.SendInitialEvents
	initialEvents := (sendInitial == nil && rev == 0) || (sendInitial != nil && *sendInitial)
	if initialEvents {
		var ok bool
		if rev, ok = w.sendInitialEvents(rev); !ok {
			return
		}
		if sendInitial != nil && w.opts.ProgressNotify {
			if !w.send(storage.Event{Type: watch.Bookmark, ResourceVersion: rev, InitialEventsEnd: true}) {
				return
			}
		}
	}

	ops := []clientv3.OpOption{clientv3.WithRev(rev + 1)}
	if !w.keysOfDeletions() {
		ops = append(ops, clientv3.WithPrevKV())
	}
	if w.recursive {
		ops = append(ops, clientv3.WithPrefix())
	}
	if w.opts.ProgressNotify {
		ops = append(ops, clientv3.WithProgressNotify())
	}
	for resp := range w.store.client.Watch(clientv3.WithRequireLeader(w.ctx), w.key, ops...) {
		if err := resp.Err(); err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				w.sendError(storage.NewWatchExpiredError(rev))
			} else {
				w.sendError(wrapClientError(w.key, err))
			}
			return
		}
		if resp.IsProgressNotify() {
			// The client multiplexes watches on one stream, and a progress
			// request (a consistent read of the cache elsewhere) is
			// answered on every watch of the stream: only a watch that
			// asked for bookmarks may see one.
			if w.opts.ProgressNotify && !w.send(storage.Event{Type: watch.Bookmark, ResourceVersion: resp.Header.Revision}) {
				return
			}
			continue
		}
		for _, ev := range resp.Events {
			out, ok, err := w.transform(ev)
			if err != nil {
				w.sendError(err)
				return
			}
			if ok && !w.send(out) {
				return
			}
		}
	}
}

// sendInitialEvents sends ADDED for the current state (which must not be
// older than minRev) and returns the revision it was read at.
func (w *watcher) sendInitialEvents(minRev int64) (int64, bool) {
	opts := storage.ListOptions{Predicate: w.opts.Predicate, Recursive: w.recursive}
	opts.Predicate.Limit, opts.Predicate.Continue = 0, ""
	list, err := w.store.GetList(w.ctx, strings.TrimSuffix(w.key, "/"), opts)
	if err != nil {
		w.sendError(err)
		return 0, false
	}
	if minRev > list.ResourceVersion {
		w.sendError(storage.NewTooLargeResourceVersionError(minRev, list.ResourceVersion))
		return 0, false
	}
	for _, obj := range list.Items {
		if !w.send(storage.Event{Type: watch.Added, Object: obj}) {
			return 0, false
		}
	}
	return list.ResourceVersion, true
}

// transform turns an etcd event into the event this watch reports, if any:
// an object that starts matching the selector is ADDED, one that stops
// matching is DELETED (with its last matching state at this revision).
func (w *watcher) transform(ev *clientv3.Event) (storage.Event, bool, error) {
	rev := ev.Kv.ModRevision
	var cur, prev *storage.Object
	var err error
	if ev.Type == clientv3.EventTypePut {
		if cur, err = w.store.object(w.ctx, string(ev.Kv.Key), rev, ev.Kv.Value); err != nil {
			return storage.Event{}, false, err
		}
	}
	// The previous state is only needed for a deletion, or to tell a
	// change of whether the selector matches; it is reported at the
	// revision of this change.
	needPrev := ev.Type == clientv3.EventTypeDelete || !ev.IsCreate() && !w.opts.Predicate.Empty()
	if ev.PrevKv != nil && needPrev {
		if prev, err = w.store.object(w.ctx, string(ev.PrevKv.Key), rev, ev.PrevKv.Value); err != nil {
			return storage.Event{}, false, err
		}
	}
	switch {
	case ev.Type == clientv3.EventTypeDelete && w.keysOfDeletions():
		return storage.Event{Type: watch.Deleted, Object: &storage.Object{Key: string(ev.Kv.Key), ResourceVersion: rev}}, true, nil
	case ev.Type == clientv3.EventTypeDelete:
		if prev == nil {
			return storage.Event{}, false, storage.NewInternalError(string(ev.Kv.Key), errors.New("etcd3: delete event without the previous state"))
		}
		ok, err := w.matches(prev)
		return storage.Event{Type: watch.Deleted, Object: prev}, ok, err
	case ev.IsCreate():
		ok, err := w.matches(cur)
		return storage.Event{Type: watch.Added, Object: cur}, ok, err
	}
	if w.opts.Predicate.Empty() {
		return storage.Event{Type: watch.Modified, Object: cur}, true, nil
	}
	curOK, err := w.matches(cur)
	if err != nil {
		return storage.Event{}, false, err
	}
	prevOK := false
	if prev != nil {
		if prevOK, err = w.matches(prev); err != nil {
			return storage.Event{}, false, err
		}
	}
	switch {
	case curOK && prevOK:
		return storage.Event{Type: watch.Modified, Object: cur}, true, nil
	case curOK:
		return storage.Event{Type: watch.Added, Object: cur}, true, nil
	case prevOK:
		return storage.Event{Type: watch.Deleted, Object: prev}, true, nil
	}
	return storage.Event{}, false, nil
}

// keysOfDeletions says whether deletions are reported without their last
// state (storage.ListOptions.WithoutPreviousState).
func (w *watcher) keysOfDeletions() bool {
	return w.opts.WithoutPreviousState && w.opts.Predicate.Empty()
}

func (w *watcher) matches(obj *storage.Object) (bool, error) {
	return w.store.matches(obj, w.opts.Predicate)
}

func (w *watcher) send(ev storage.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *watcher) sendError(err error) {
	if w.ctx.Err() != nil {
		return // stopped by the client: nobody is listening
	}
	w.send(storage.Event{Type: watch.Error, Err: err})
}
