package cacher_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

func create(t *testing.T, s storage.Interface, cfg storage.Config, ns, name string) int64 {
	t.Helper()
	out := &corev1.Pod{}
	if err := s.Create(context.Background(), cfg.ResourcePrefix+"/"+ns+"/"+name, storagetest.NewPod(ns, name, "", nil), out, 0); err != nil {
		t.Fatal(err)
	}
	rv, _ := strconv.ParseInt(out.ResourceVersion, 10, 64)
	return rv
}

// touch updates the pod's labels and returns the update's revision.
func touch(t *testing.T, s storage.Interface, cfg storage.Config, ns, name string, i int) int64 {
	t.Helper()
	out := &corev1.Pod{}
	err := s.GuaranteedUpdate(context.Background(), cfg.ResourcePrefix+"/"+ns+"/"+name, out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			p := in.(*corev1.Pod)
			p.Labels = map[string]string{"i": strconv.Itoa(i)}
			return p, nil, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.ParseInt(out.ResourceVersion, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

func watchFrom(t *testing.T, c *cacher.Cacher, cfg storage.Config, rv int64, bookmarks bool) storage.Watcher {
	t.Helper()
	w, err := c.Watch(context.Background(), cfg.ResourcePrefix, storage.ListOptions{
		ResourceVersion: strconv.FormatInt(rv, 10), Recursive: true, Predicate: storage.Everything, ProgressNotify: bookmarks,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// TestSlowWatcherIsTerminated: a watcher that never reads is ended, and
// the others still get every event.
func TestSlowWatcherIsTerminated(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	rv := create(t, c, cfg, "ns", "p")
	slow := watchFrom(t, c, cfg, rv, false)
	fast := []*recorder{}
	for i := range 3 {
		// A reader that the loaded machine (-race, other packages'
		// tests) slows past the budget is ended too: it starts again
		// from its last revision, as a client would, and must still get
		// every event once.
		r := &recorder{from: rv, rewatch: func(from int64) (storage.Watcher, error) {
			return watchFrom(t, c, cfg, from, false), nil
		}}
		r.start(watchFrom(t, c, cfg, rv, false), i == 0)
		fast = append(fast, r)
	}
	const updates = 400 // well past a watcher's buffer
	for i := range updates {
		touch(t, c, cfg, "ns", "p", i)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, r := range fast {
		for r.count() < updates && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := len(r.stop()); got != updates {
			t.Errorf("a reading watcher got %d events, want %d", got, updates)
		}
		if r.restarts > 0 {
			t.Logf("a reading watcher was ended as too slow %d times", r.restarts)
		}
	}
	// The slow watcher's channel is closed once its few buffered events
	// are drained.
	n := 0
	for {
		select {
		case _, ok := <-slow.ResultChan():
			if !ok {
				if n >= updates {
					t.Fatalf("the slow watcher got all %d events: it was never terminated", n)
				}
				return
			}
			n++
		case <-time.After(10 * time.Second):
			t.Fatalf("the slow watcher was not terminated (%d events read)", n)
		}
	}
}

// TestBookmarksOnIdleResource: watchers that allow bookmarks get them
// periodically, at the latest revision, even when nothing changes.
func TestBookmarksOnIdleResource(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg, func(cc *cacher.Config) { cc.BookmarkFrequency = 100 * time.Millisecond })
	rv := create(t, c, cfg, "ns", "p")
	w := watchFrom(t, c, cfg, rv, true)
	noBookmarks := watchFrom(t, c, cfg, rv, false)
	// Writes elsewhere move etcd's revision; this resource stays idle,
	// and each bookmark carries the store's newer revision.
	other := storagetest.PodConfig()
	last := rv
	for i := range 2 {
		create(t, etcd3.New(etcd.Client, other), other, "ns", fmt.Sprint("other-", i))
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("unexpected %s event", ev.Type)
			}
			if ev.ResourceVersion <= last {
				t.Fatalf("bookmark at %d, not past %d", ev.ResourceVersion, last)
			}
			last = ev.ResourceVersion
		case <-time.After(10 * time.Second):
			t.Fatal("no bookmark on an idle resource")
		}
	}
	select {
	case ev := <-noBookmarks.ResultChan():
		t.Fatalf("a watcher without allowWatchBookmarks got %s", ev.Type)
	default:
	}
}

// TestTooLargeResourceVersion: reads at a revision the cache never
// reaches give up after a while with TooLargeResourceVersion.
func TestTooLargeResourceVersion(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	rv := create(t, c, cfg, "ns", "p")
	future := strconv.FormatInt(rv+100000, 10)
	_, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{
		ResourceVersion: future, Recursive: true, Predicate: storage.Everything,
	})
	if !storage.IsTooLargeResourceVersion(err) {
		t.Fatalf("list at %s: want TooLargeResourceVersion, got %v", future, err)
	}
}

// TestConsistentListSeesEveryWrite: a list without resourceVersion never
// misses a write that completed before it, even one the cache learns of
// only through etcd (the write does not go through this cache).
func TestConsistentListSeesEveryWrite(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	other := newCacher(t, etcd, cfg) // another replica's cache, same etcd
	for i := range 50 {
		name := fmt.Sprintf("p%d", i)
		create(t, other, cfg, "ns", name)
		res, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Items) != i+1 {
			t.Fatalf("after %d creates a consistent list has %d items", i+1, len(res.Items))
		}
	}
}

// TestEtcdRestartLosesNothing: when etcd stops and starts again, the
// cache's watch of etcd resumes from its revision (the etcd client does
// that), so watchers go on and lose nothing; the changes made after the
// restart reach them.
func TestEtcdRestartLosesNothing(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	rv := create(t, c, cfg, "ns", "before")
	rec := &recorder{}
	rec.start(watchFrom(t, c, cfg, rv, false), true)
	etcd.Stop()
	etcd.Restart()
	var after int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := &corev1.Pod{}
		err := c.Create(context.Background(), cfg.ResourcePrefix+"/ns/after", storagetest.NewPod("ns", "after", "", nil), out, 0)
		if err == nil {
			after, _ = strconv.ParseInt(out.ResourceVersion, 10, 64)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not come back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for rec.count() < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := rec.stop()
	want := fmt.Sprintf("ADDED %s/ns/after %d", cfg.ResourcePrefix, after)
	if len(got) == 0 || got[0] != want {
		t.Fatalf("after the restart the watcher got %q, want [%s] (or a clean end and nothing lost)", got, want)
	}
}

// TestRelistTerminatesWatchers: when the cache's watch of the store fails
// for another reason than etcd being out of reach (here: what it read does
// not make sense), the cache lists again, ends every watch cleanly (the
// channel closes), and serves the state of the new list.
func TestRelistTerminatesWatchers(t *testing.T) {
	f := newFaultyWatch(t)
	f.reflector.fail(storage.NewInternalError("", fmt.Errorf("injected failure")))
	select {
	case ev, ok := <-f.w.ResultChan():
		if ok {
			t.Fatalf("want the watch ended, got %s", ev.Type)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the watch was not ended after the cache's watch failed")
	}
	<-f.faulty.watches // the reflector watches again after its re-list
	waitReady(t, f.c)
	res, err := f.c.GetList(context.Background(), f.cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil || len(res.Items) != 1 {
		t.Fatalf("after the re-list: %v, %d items", err, len(res.Items))
	}
}

// TestUnreachableStoreKeepsWatchers: when the cache's watch of the store
// fails because etcd cannot be reached (a lost quorum), the cache watches
// again from its revision without a new list: the watches stay open, and
// a change made meanwhile reaches them.
func TestUnreachableStoreKeepsWatchers(t *testing.T) {
	f := newFaultyWatch(t)
	// Lists from now on would hang: the cache must not list again.
	f.faulty.listGate = make(chan struct{})
	f.reflector.fail(storage.NewUnreachableError("", fmt.Errorf("etcdserver: no leader")))
	// Written while the cache's watch is down, straight to etcd.
	after := create(t, etcd3.New(f.etcd.Client, f.cfg), f.cfg, "ns", "meanwhile")
	select {
	case ev, ok := <-f.w.ResultChan():
		if !ok {
			t.Fatal("the watch was ended when etcd could not be reached")
		}
		if ev.Type != watch.Added || ev.Object.ResourceVersion != after {
			t.Fatalf("got %s at %d, want ADDED at %d", ev.Type, ev.Object.ResourceVersion, after)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the change made while the cache's watch was down never came")
	}
	if err := f.c.ReadinessCheck(); err != nil {
		t.Errorf("the cache is not ready after watching again: %v", err)
	}
	close(f.faulty.listGate)
}

// faultyWatch is the start of a test of a broken watch of the store: a
// ready cache over a faultyStorage holding one pod, a client's watch
// from that pod's creation, and the cache's own watch of the store, for
// the test to break.
type faultyWatch struct {
	etcd      *etcdtest.Etcd
	cfg       storage.Config
	faulty    *faultyStorage
	c         *cacher.Cacher
	w         storage.Watcher
	reflector *faultyWatcher
}

func newFaultyWatch(t *testing.T) *faultyWatch {
	t.Helper()
	f := &faultyWatch{etcd: etcdtest.Start(t), cfg: storagetest.PodConfig()}
	f.faulty, f.c = newFaultyCacher(t, f.etcd, f.cfg)
	rv := create(t, f.c, f.cfg, "ns", "p")
	f.w = watchFrom(t, f.c, f.cfg, rv, false)
	f.reflector = <-f.faulty.watches
	return f
}

// newFaultyCacher returns a ready cache over the real store whose watches
// the test can break.
func newFaultyCacher(t *testing.T, etcd *etcdtest.Etcd, cfg storage.Config) (*faultyStorage, *cacher.Cacher) {
	t.Helper()
	faulty := &faultyStorage{Interface: etcd3.New(etcd.Client, cfg), watches: make(chan *faultyWatcher, 10)}
	c, err := cacher.New(cacher.Config{Storage: faulty, Resource: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	waitReady(t, c)
	return faulty, c
}

func waitReady(t *testing.T, c *cacher.Cacher) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.ReadinessCheck() != nil {
		if time.Now().After(deadline) {
			t.Fatal("cache not ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// faultyStorage is the real store whose watches the test can break, to
// drive the reflector's failure path deterministically.
type faultyStorage struct {
	storage.Interface
	watches chan *faultyWatcher
	// listGate, when set, holds every list until it is closed.
	listGate chan struct{}
}

func (f *faultyStorage) GetList(ctx context.Context, key string, opts storage.ListOptions) (*storage.ListResult, error) {
	if f.listGate != nil {
		select {
		case <-f.listGate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return f.Interface.GetList(ctx, key, opts)
}

func (f *faultyStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (storage.Watcher, error) {
	w, err := f.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	fw := &faultyWatcher{inner: w, out: make(chan storage.Event), failc: make(chan error, 1), done: make(chan struct{})}
	go fw.run()
	f.watches <- fw
	return fw, nil
}

type faultyWatcher struct {
	inner storage.Watcher
	out   chan storage.Event
	failc chan error
	done  chan struct{}
	once  sync.Once
}

func (w *faultyWatcher) run() {
	defer close(w.out)
	for {
		select {
		case err := <-w.failc:
			select {
			case w.out <- storage.Event{Type: watch.Error, Err: err}:
			case <-w.done:
			}
			return
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case <-w.done:
				return
			}
		case <-w.done:
			return
		}
	}
}

func (w *faultyWatcher) fail(err error)                   { w.failc <- err }
func (w *faultyWatcher) ResultChan() <-chan storage.Event { return w.out }
func (w *faultyWatcher) Stop() {
	w.once.Do(func() { close(w.done); w.inner.Stop() })
}

// TestNotReadyUntilFirstList: before the cache has its first list, watches
// and lists it would serve are refused as not ready (429 upstream), a
// plain paged list and GETs go to etcd, and the cache says it is not
// ready.
func TestNotReadyUntilFirstList(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	raw := etcd3.New(etcd.Client, cfg)
	create(t, raw, cfg, "ns", "p")
	gate := make(chan struct{})
	faulty := &faultyStorage{Interface: raw, watches: make(chan *faultyWatcher, 10), listGate: gate}
	c, err := cacher.New(cacher.Config{Storage: faulty, Resource: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx := context.Background()
	if c.ReadinessCheck() == nil {
		t.Fatal("ready before the first list")
	}
	_, err = c.Watch(ctx, cfg.ResourcePrefix, storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
	if storage.CodeOf(err) != storage.ErrCodeNotReady {
		t.Fatalf("watch: want NotReady, got %v", err)
	}
	_, err = c.GetList(ctx, cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if storage.CodeOf(err) != storage.ErrCodeNotReady {
		t.Fatalf("list: want NotReady, got %v", err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, cfg.ResourcePrefix+"/ns/p", storage.GetOptions{ResourceVersion: "0"}, got); err != nil || got.Name != "p" {
		t.Fatalf("get: want it from etcd, got %v", err)
	}
	close(gate) // paged lists go to etcd too, which now answers
	paged := storage.Everything
	paged.Limit = 10
	res, err := c.GetList(ctx, cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: paged})
	if err != nil || len(res.Items) != 1 {
		t.Fatalf("paged list: %v", err)
	}
	waitReady(t, c)
}

// TestBookmarksNeverOvertakeEvents: a bookmark at revision R tells a
// watcher it has every event up to R, so it must never be sent while an
// event at or before R is still on its way to the watchers (the watcher
// skips that event as one it already has). Bookmarks are due at every tick
// here while writers keep the dispatcher busy; every watcher must get every
// update.
func TestBookmarksNeverOvertakeEvents(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg, func(cc *cacher.Config) { cc.BookmarkFrequency = time.Nanosecond })
	const writers, watchers = 4, 100
	var rv int64
	for i := range writers {
		rv = create(t, c, cfg, "ns", fmt.Sprint("p", i))
	}
	counts := make([]atomic.Int64, watchers)
	for i := range watchers {
		w := watchFrom(t, c, cfg, rv, true)
		go func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Modified {
					counts[i].Add(1)
				}
			}
		}()
	}
	// Long enough for a few ticks of the dispatcher's bookmark timer.
	deadline := time.Now().Add(3500 * time.Millisecond)
	var total atomic.Int64
	var writing sync.WaitGroup
	for i := range writers {
		writing.Go(func() {
			for n := 0; time.Now().Before(deadline); n++ {
				touch(t, c, cfg, "ns", fmt.Sprint("p", i), n)
				total.Add(1)
			}
		})
	}
	writing.Wait()
	want := total.Load()
	waitUntil := time.Now().Add(30 * time.Second)
	for i := range counts {
		for counts[i].Load() < want && time.Now().Before(waitUntil) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := counts[i].Load(); got != want {
			t.Errorf("watcher %d got %d of the %d updates", i, got, want)
		}
	}
}

// TestReadAtZeroSeesOwnWrites: a read at resourceVersion "0" answers from
// the cache without asking etcd, yet sees every create and update made
// through the same cacher (the admission steps that read LimitRanges and
// PriorityClasses this way rely on it); several writers and readers at
// once, each checking its own writes.
func TestReadAtZeroSeesOwnWrites(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	c := newCacher(t, etcd, cfg)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 25 {
				name := fmt.Sprintf("w%d-p%d", w, i)
				create(t, c, cfg, "ns", name)
				got := &corev1.Pod{}
				if err := c.Get(ctx, cfg.ResourcePrefix+"/ns/"+name, storage.GetOptions{ResourceVersion: "0"}, got); err != nil {
					t.Errorf("get at 0 right after creating %s: %v", name, err)
					return
				}
				touch(t, c, cfg, "ns", name, i)
				res, err := c.GetList(ctx, cfg.ResourcePrefix+"/ns", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
				if err != nil {
					t.Errorf("list at 0: %v", err)
					return
				}
				found := false
				for _, item := range res.Items {
					p := &corev1.Pod{}
					if err := item.Decode(p); err != nil {
						t.Error(err)
						return
					}
					if p.Name == name {
						found = p.Labels["i"] == strconv.Itoa(i)
					}
				}
				if !found {
					t.Errorf("a list at 0 right after updating %s misses the update", name)
					return
				}
			}
		})
	}
	wg.Wait()
}
