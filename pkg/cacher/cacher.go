package cacher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/periodic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Config of a Cacher.
type Config struct {
	// Storage is the store the cache lists, watches and writes through.
	Storage storage.Interface
	// Resource describes the objects cached.
	Resource storage.Config
	// Capacity bounds the event history; <= 0 lets it size itself
	// (100 to 102,400 events, keeping about 75 s).
	Capacity int
	// HistoryBytes, when > 0, bounds the bytes of the objects the event
	// history holds (each event keeps its object's stored encoding): past
	// it the oldest events fall off even if younger than 75 s, and a
	// watch from before them gets "too old resource version" (410), as
	// past Capacity. 0: bounded by Capacity only, as kube's.
	HistoryBytes int64
	// BookmarkFrequency is how often watchers that allow bookmarks get one
	// (one minute when 0).
	BookmarkFrequency time.Duration
	// CompactionCheckPeriod is how often the cache asks etcd how far it
	// compacted (10 s when 0).
	CompactionCheckPeriod time.Duration
	// EncodingBudget, when set, lets the cached objects remember their
	// other encodings (the protobuf of a list item) within it, so that
	// repeated protobuf LISTs do not decode and encode every item again.
	// Several caches may share one.
	EncodingBudget *storage.EncodingBudget
	// Metrics are the server's watch cache metrics, which the caches of
	// one server share (nil: recorded nowhere read).
	Metrics *Metrics
}

// freshnessTimeout bounds how long a read waits for the cache to reach the
// revision it needs, as kube's 3 s.
const freshnessTimeout = 3 * time.Second

// Cacher is a storage.Interface that serves reads from a watch cache.
type Cacher struct {
	storage  storage.Interface
	resource storage.Config
	cfg      Config
	metrics  *resourceMetrics

	wc         *watchCache
	pages      snapshots // of paginated lists, for their continue tokens
	dispatcher *dispatcher
	incoming   chan *event
	ready      *readiness
	progress   *progressRequester
	trigger    string // the indexed field watches may select on
	hints      attrHints
	observer   storage.WriteObserver // observeWrite, made once

	// written is the highest revision created or updated through this
	// cacher: reads at resourceVersion "0" wait for the cache to reach it
	// (see waitForOwnWrites).
	written atomic.Int64

	ctx          context.Context
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	stopChecking func() // waits for a compaction check in progress
}

var _ storage.Interface = (*Cacher)(nil)

// StorageWithCacher is the Decorator that puts a watch cache configured
// by opts in front of the raw store (opts.Storage and opts.Resource are
// the decorated store's). A resource whose cache is off uses the
// registry's UndecoratedStorage.
func StorageWithCacher(opts Config) storage.Decorator {
	return func(raw storage.Factory, cfg storage.Config) (storage.Interface, storage.DestroyFunc, error) {
		s, destroyRaw, err := raw(cfg)
		if err != nil {
			return nil, nil, err
		}
		opts := opts
		opts.Storage, opts.Resource = s, cfg
		c, err := New(opts)
		if err != nil {
			destroyRaw()
			return nil, nil, err
		}
		return c, func() { c.Stop(); destroyRaw() }, nil
	}
}

// New starts a cache of cfg.Resource over cfg.Storage: it lists and
// watches in the background and is ready (ReadinessCheck) once the first
// list is in. Stop releases it.
func New(cfg Config) (*Cacher, error) {
	if cfg.Storage == nil || cfg.Resource.NewFunc == nil || cfg.Resource.AttrFunc == nil {
		return nil, fmt.Errorf("cacher: %s: Storage, NewFunc and AttrFunc are required", cfg.Resource.Resource)
	}
	if cfg.BookmarkFrequency <= 0 {
		cfg.BookmarkFrequency = time.Minute
	}
	if cfg.CompactionCheckPeriod <= 0 {
		cfg.CompactionCheckPeriod = 10 * time.Second
	}
	m := newResourceMetrics(cfg.Metrics, cfg.Resource.Resource)
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cacher{
		storage:    cfg.Storage,
		resource:   cfg.Resource,
		cfg:        cfg,
		metrics:    m,
		wc:         newWatchCache(cfg.Capacity, cfg.HistoryBytes, cfg.Resource.IndexFields),
		dispatcher: newDispatcher(cfg.BookmarkFrequency, m),
		incoming:   make(chan *event, 100),
		ready:      newReadiness(),
		ctx:        ctx,
		cancel:     cancel,
	}
	c.observer = c.observeWrite
	if len(cfg.Resource.IndexFields) > 0 {
		c.trigger = cfg.Resource.IndexFields[0]
	}
	c.progress = newProgressRequester(ctx, cfg.Storage)
	c.metrics.capacity.Set(float64(c.wc.historyCapacity()))
	c.wg.Add(2)
	go func() { defer c.wg.Done(); c.runReflector() }()
	go func() { defer c.wg.Done(); c.dispatchEvents() }()
	c.stopChecking = periodic.Every(ctx, cfg.CompactionCheckPeriod, cfg.CompactionCheckPeriod, c.checkCompaction)
	return c, nil
}

// Stop stops the cache and ends every watch it serves.
func (c *Cacher) Stop() {
	c.ready.stop()
	c.cancel()
	c.wg.Wait()
	c.stopChecking()
	c.progress.stop()
	c.dispatcher.terminateAll()
}

// ReadinessCheck implements storage.Interface: ready once the first list
// is in, and again after each re-list.
func (c *Cacher) ReadinessCheck() error {
	if ok, _ := c.ready.check(); !ok {
		return fmt.Errorf("cacher: %s: not ready", c.resource.Resource)
	}
	return nil
}

// Stats implements storage.StatsReporter, from the cache once it is
// ready.
func (c *Cacher) Stats() (storage.Stats, bool) {
	if c.ReadinessCheck() != nil {
		return storage.Stats{}, false
	}
	n, b := c.wc.size()
	return storage.Stats{ObjectCount: n, ObjectBytes: b, Watchers: c.dispatcher.watcherCount()}, true
}

// Create implements storage.Interface: writes go to the store, and leave
// the new object's labels and fields for the reflector (attrHints).
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.storage.Create(c.observing(ctx), key, obj, out, ttl); err != nil {
		return err
	}
	c.noteWrite(out)
	return nil
}

// GuaranteedUpdate implements storage.Interface. The cached state is the
// first guess, saving a read of etcd when it is current.
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) error {
	if cachedExisting == nil {
		cachedExisting = c.cachedObject(key)
	}
	if err := c.storage.GuaranteedUpdate(c.observing(ctx), key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting); err != nil {
		return err
	}
	c.noteWrite(dest)
	return nil
}

var _ storage.ObjectWriter = (*Cacher)(nil)

// CreateObject implements storage.ObjectWriter: Create, returning the
// stored Object when the store can (nil otherwise).
func (c *Cacher) CreateObject(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) (*storage.Object, error) {
	w, ok := c.storage.(storage.ObjectWriter)
	if !ok {
		return nil, c.Create(ctx, key, obj, out, ttl)
	}
	stored, err := w.CreateObject(c.observing(ctx), key, obj, out, ttl)
	if err == nil {
		c.noteWrite(out)
	}
	return stored, err
}

// GuaranteedUpdateObject implements storage.ObjectWriter: GuaranteedUpdate,
// returning the stored Object when the store can (nil otherwise).
func (c *Cacher) GuaranteedUpdateObject(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExisting runtime.Object) (*storage.Object, error) {
	w, ok := c.storage.(storage.ObjectWriter)
	if !ok {
		return nil, c.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting)
	}
	if cachedExisting == nil {
		cachedExisting = c.cachedObject(key)
	}
	stored, err := w.GuaranteedUpdateObject(c.observing(ctx), key, dest, ignoreNotFound, preconditions, tryUpdate, cachedExisting)
	if err == nil {
		c.noteWrite(dest)
	}
	return stored, err
}

// noteWrite remembers the revision of an object written through the
// cacher. (A delete's answer carries the object's last revision, not the
// deletion's, so deletes are not waited for.)
func (c *Cacher) noteWrite(obj runtime.Object) {
	rev, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return
	}
	for {
		cur := c.written.Load()
		if rev <= cur || c.written.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// waitForOwnWrites makes a read at resourceVersion "0" see what was
// written through this server: kube's own readers at "0" are informers,
// whose lag nobody waits out, but this server's admission steps read the
// cache instead of asking etcd (a LimitRange or PriorityClass created just
// before a pod applies to it), and a client that wrote and then lists at
// "0" sees its write. The events of those writes are on their way, so the
// wait is short; should the cache be stuck, the read is served as it is
// after freshnessTimeout, as "0" promises no freshness.
func (c *Cacher) waitForOwnWrites(ctx context.Context) error {
	err := c.waitUntilFresh(ctx, c.written.Load())
	if storage.IsTooLargeResourceVersion(err) {
		return nil
	}
	return err
}

// Delete implements storage.Interface, with the cached state as first guess.
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExisting runtime.Object) error {
	if cachedExisting == nil {
		cachedExisting = c.cachedObject(key)
	}
	return c.storage.Delete(ctx, key, out, preconditions, validateDeletion, cachedExisting)
}

// cachedObject decodes the cached state of key, or returns nil.
func (c *Cacher) cachedObject(key string) runtime.Object {
	if ok, _ := c.ready.check(); !ok {
		return nil
	}
	e, found := c.wc.get(key)
	if !found {
		return nil
	}
	obj := c.resource.NewFunc()
	if err := e.obj.Decode(obj); err != nil {
		return nil
	}
	return obj
}

// Count implements storage.Interface (from etcd, as kube).
func (c *Cacher) Count(ctx context.Context, key string) (int64, error) {
	return c.storage.Count(ctx, key)
}

// CurrentResourceVersion implements storage.Interface.
func (c *Cacher) CurrentResourceVersion(ctx context.Context) (int64, error) {
	return c.storage.CurrentResourceVersion(ctx)
}

// Get implements storage.Interface: without a resourceVersion (or before
// the cache is ready) from etcd; otherwise from the cache, once it has
// reached the revision asked for (up to 3 s, then TooLargeResourceVersion).
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return err
	}
	if ok, _ := c.ready.check(); opts.ResourceVersion == "" || !ok {
		return c.storage.Get(ctx, key, opts, out)
	}
	if err := c.waitFor(ctx, rev); err != nil {
		return err
	}
	e, found := c.wc.get(key)
	if !found {
		if opts.IgnoreNotFound {
			return storage.Zero(out)
		}
		return storage.NewKeyNotFoundError(key, rev)
	}
	return e.obj.Decode(out)
}

// GetObject implements storage.ObjectGetter with Get's semantics: etcd
// without a resourceVersion (or before the cache is ready), the cache
// otherwise. Stores that cannot return objects undecoded are not asked.
func (c *Cacher) GetObject(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	rev, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return nil, err
	}
	if ok, _ := c.ready.check(); opts.ResourceVersion == "" || !ok {
		if getter, ok := c.storage.(storage.ObjectGetter); ok {
			return getter.GetObject(ctx, key, opts)
		}
		return c.getEncoded(ctx, key, opts)
	}
	if err := c.waitFor(ctx, rev); err != nil {
		return nil, err
	}
	e, found := c.wc.get(key)
	if !found {
		return nil, storage.NewKeyNotFoundError(key, rev)
	}
	return e.obj, nil
}

// getEncoded reads key through Get and encodes it, for stores that cannot
// return objects undecoded.
func (c *Cacher) getEncoded(ctx context.Context, key string, opts storage.GetOptions) (*storage.Object, error) {
	obj := c.resource.NewFunc()
	if err := c.storage.Get(ctx, key, opts, obj); err != nil {
		return nil, err
	}
	rev, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, err
	}
	data, err := storage.Encode(obj)
	if err != nil {
		return nil, err
	}
	return storage.NewObject(key, rev, data)
}

// waitFor waits until the cache can answer a read at resourceVersion rev
// (0: "0", any).
func (c *Cacher) waitFor(ctx context.Context, rev int64) error {
	if rev == 0 {
		return c.waitForOwnWrites(ctx)
	}
	return c.waitUntilFresh(ctx, rev)
}

// waitUntilFresh waits until the cache has seen rev, asking etcd for
// progress meanwhile; after freshnessTimeout it gives up with
// TooLargeResourceVersion.
func (c *Cacher) waitUntilFresh(ctx context.Context, rev int64) error {
	if rev == 0 {
		return nil
	}
	if c.wc.resourceVersion() >= rev {
		return nil
	}
	start := time.Now()
	defer func() { c.metrics.readWait.Observe(time.Since(start).Seconds()) }()
	waitCtx, cancel := context.WithTimeout(ctx, freshnessTimeout)
	defer cancel()
	done := c.progress.want()
	defer done()
	current, err := c.wc.waitUntilFresh(waitCtx, rev)
	if err != nil {
		if ctx.Err() != nil {
			return storage.NewUnreachableError("", ctx.Err())
		}
		return storage.NewTooLargeResourceVersionError(rev, current)
	}
	return nil
}

// relKey is a key relative to the resource prefix ("ns/name").
func (c *Cacher) relKey(key string) string {
	return strings.TrimPrefix(strings.TrimPrefix(key, c.resource.ResourcePrefix), "/")
}

// triggerValue is an entry's value of the indexed trigger field.
func (c *Cacher) triggerValue(e *entry) (string, bool) {
	if c.trigger == "" || e == nil {
		return "", false
	}
	return e.fields.Get(c.trigger), true
}
