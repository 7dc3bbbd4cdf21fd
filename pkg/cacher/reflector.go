package cacher

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// relistBackoff paces the re-lists, as kube's reflector: 800 ms doubling
// up to 30 s (each up to a fifth more at random), back to the start after
// a run that lasted 2 minutes.
var relistBackoff = backoff.Policy{Initial: 800 * time.Millisecond, Max: 30 * time.Second, Jitter: 0.2, Reset: 2 * time.Minute}

// List page bounds: pages of listPageSize objects, fewer when objects are
// large, so that one page holds at most listPageBytes.
const (
	listPageSize  = 500
	listPageBytes = 4 << 20
)

// runReflector keeps the cache filled: list, then watch from the list's
// revision; on any failure, wait (backoff) and list again.
func (c *Cacher) runReflector() {
	b := backoff.New(relistBackoff)
	for {
		start := time.Now()
		err := c.listAndWatch()
		if c.ctx.Err() != nil {
			return
		}
		c.ready.set(false)
		wait := b.Next(time.Since(start))
		slog.Warn("cacher: watch of the store ended; listing again", "resource", c.resource.Resource, "error", err, "in", wait)
		if !backoff.Wait(c.ctx, wait) {
			return
		}
	}
}

// listAndWatch fills the cache from a list and follows its changes. When
// etcd cannot be reached (a member lost, no quorum), it watches again from
// the cache's revision, as kube's reflector does: the history and the
// watchers stay, and the changes made meanwhile reach them once etcd
// answers. Any other failure (the revision compacted, an object that
// does not decode) ends it, for a new list.
func (c *Cacher) listAndWatch() error {
	entries, rev, err := c.list()
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	c.wc.replace(entries, rev)
	c.hints.reset()
	// The watchers' history ended with the old contents: their clients
	// must start again (from a list, or from a revision still served).
	c.dispatcher.terminateAll()
	if err := c.passProgress(rev); err != nil {
		return err
	}
	c.metrics.resourceVersion.Set(float64(rev))
	c.ready.set(true)

	b := backoff.New(rewatchBackoff)
	for {
		start := time.Now()
		err := c.watch(c.wc.resourceVersion())
		if !storage.IsUnreachable(err) {
			return err
		}
		wait := b.Next(time.Since(start))
		slog.Warn("cacher: watch of the store failed; watching again from the cache's revision", "resource", c.resource.Resource, "error", err, "in", wait)
		if !backoff.Wait(c.ctx, wait) {
			return c.ctx.Err()
		}
	}
}

// rewatchBackoff paces the watches started again while etcd cannot be
// reached: short, so that the cache follows again soon after etcd's
// quorum returns.
var rewatchBackoff = backoff.Policy{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Reset: 2 * time.Minute}

// watch applies the changes after rev to the cache until the watch fails.
func (c *Cacher) watch(rev int64) error {
	w, err := c.storage.Watch(c.ctx, c.resource.ResourcePrefix, storage.ListOptions{
		ResourceVersion: fmt.Sprint(rev),
		Recursive:       true,
		ProgressNotify:  true,
		Predicate:       storage.Everything,
		// A deletion's last state is the cache's stored entry: etcd need
		// not read and send every change's previous value (kube's cacher
		// asks for it; most of it was decoded only to be dropped).
		WithoutPreviousState: true,
	})
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return ev.Err
		case watch.Bookmark:
			c.wc.progress(ev.ResourceVersion)
			c.metrics.resourceVersion.Set(float64(ev.ResourceVersion))
			if err := c.passProgress(ev.ResourceVersion); err != nil {
				return err
			}
			continue
		}
		cached, err := c.processEvent(ev)
		if err != nil {
			return err
		}
		if cached == nil {
			if err := c.passProgress(ev.Object.ResourceVersion); err != nil {
				return err
			}
			continue
		}
		select {
		case c.incoming <- cached:
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
	return fmt.Errorf("watch closed")
}

// passProgress tells the dispatcher, in line with the events, that the
// cache has every change up to rev: the revision its bookmarks may carry.
func (c *Cacher) passProgress(rev int64) error {
	select {
	case c.incoming <- &event{typ: watch.Bookmark, rv: rev}:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// processEvent records a change in the watch cache.
func (c *Cacher) processEvent(ev storage.Event) (*event, error) {
	c.metrics.eventsReceived.Inc()
	var e *entry
	if ev.Type == watch.Deleted {
		e = &entry{obj: ev.Object} // attributes come from the stored state
	} else {
		var err error
		if e, err = c.newEntry(ev.Object); err != nil {
			return nil, err
		}
	}
	cached := c.wc.apply(ev.Type, e, time.Now())
	c.metrics.resourceVersion.Set(float64(ev.Object.ResourceVersion))
	if cached == nil {
		return nil, nil
	}
	c.metrics.capacity.Set(float64(c.wc.historyCapacity()))
	return cached, nil
}

// list reads every object of the resource, page by page at one revision.
func (c *Cacher) list() ([]*entry, int64, error) {
	var entries []*entry
	opts := storage.ListOptions{Recursive: true, Predicate: storage.Everything}
	opts.Predicate.Limit = listPageSize
	var rev int64
	for {
		res, err := c.storage.GetList(c.ctx, c.resource.ResourcePrefix, opts)
		if err != nil {
			return nil, 0, err
		}
		rev = res.ResourceVersion
		size := 0
		for _, obj := range res.Items {
			e, err := c.newEntry(obj)
			if err != nil {
				return nil, 0, err
			}
			entries = append(entries, e)
			size += obj.Size()
		}
		if res.Continue == "" {
			return entries, rev, nil
		}
		opts.Predicate.Continue = res.Continue
		if n := len(res.Items); n > 0 && size/n > 0 {
			opts.Predicate.Limit = int64(min(max(listPageBytes/(size/n), 1), listPageSize))
		}
	}
}

// newEntry decodes obj once to compute what filtering needs; the decoded
// object is dropped, only the bytes are kept. An object this server just
// wrote comes with its attributes (attrHints), and is not decoded.
func (c *Cacher) newEntry(obj *storage.Object) (*entry, error) {
	if hint, ok := c.hints.take(obj.Key, obj.Data()); ok {
		return &entry{obj: obj.Remembering(c.cfg.EncodingBudget), labels: hint.labels, fields: hint.fields}, nil
	}
	typed := c.resource.NewFunc()
	if err := obj.Decode(typed); err != nil {
		return nil, err
	}
	l, f, err := c.resource.AttrFunc(typed)
	if err != nil {
		return nil, storage.NewInternalError(obj.Key, err)
	}
	return &entry{obj: obj.Remembering(c.cfg.EncodingBudget), labels: newPairs(l, obj.Key), fields: newPairs(f, obj.Key)}, nil
}

// dispatchEvents hands incoming events to the watchers, and every second
// sends the bookmarks that are due. A bookmark carries the revision of the
// last event (or progress) dispatched, never the watch cache's: the cache
// is ahead by the events still queued in incoming, and a watcher given a
// bookmark past them would skip them as events it already has.
func (c *Cacher) dispatchEvents() {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var dispatched int64
	for {
		select {
		case <-c.ctx.Done():
			return
		case ev := <-c.incoming:
			if ev.typ != watch.Bookmark {
				c.dispatcher.dispatch(ev, c.relKey, c.triggerValue)
			}
			dispatched = max(dispatched, ev.rv)
		case now := <-ticker.C:
			// Bookmarks due by the next tick get a fresh revision: etcd is
			// asked for progress now, so that an idle resource's bookmarks
			// still advance with the store's revision.
			if c.dispatcher.bookmarksDue(now.Add(time.Second)) {
				c.progress.requestOnce()
			}
			c.dispatcher.bookmarks(dispatched, now)
		}
	}
}

// checkCompaction drops the history etcd has compacted away, and the
// snapshots of paginated lists that expired; it runs every
// CompactionCheckPeriod.
func (c *Cacher) checkCompaction() {
	var compacted int64
	if compactor, ok := c.storage.(storage.CompactRevisioner); ok {
		// Only a compaction past the oldest revision the cache serves
		// (its history, its paginated lists) changes what it answers.
		oldest := c.wc.oldestRevision()
		if rv, ok := c.pages.oldest(); ok && rv < oldest {
			oldest = rv
		}
		if rev, err := compactor.CompactedSince(c.ctx, oldest); err == nil && rev > 0 {
			c.wc.compact(rev)
			compacted = rev
		}
	}
	// Snapshots of paginated lists go when they expire even if no list
	// comes to notice, and when etcd has compacted their revision (their
	// tokens are expired).
	c.pages.prune(time.Now(), compacted)
}
