package cacher_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestHistoryBytesBound: a history bounded in bytes forgets its oldest
// events once the objects they carry pass the bound, however young: a
// watch from before them is refused as expired (410), a watch from within
// what is kept gets every later event. Without the bound the same watch
// is served from the history.
func TestHistoryBytesBound(t *testing.T) {
	t.Parallel()
	const updates = 100
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	// Several events' worth of pods (each a few hundred bytes), far
	// fewer than the updates.
	bounded := newCacher(t, etcd, cfg, func(cc *cacher.Config) { cc.HistoryBytes = 4 << 10 })
	unbounded := newCacher(t, etcd, cfg)

	first := create(t, bounded, cfg, "history", "p")
	rvs := make([]int64, updates)
	for i := range updates {
		rvs[i] = touch(t, bounded, cfg, "history", "p", i)
	}
	waitFresh(t, bounded, cfg)
	waitFresh(t, unbounded, cfg)

	if ev := firstEvent(t, watchFrom(t, bounded, cfg, first, false)); ev.Type != watch.Error || !storage.IsExpired(ev.Err) {
		t.Fatalf("bounded history, watch from %d (%d updates ago): want an expired error, got %v %v", first, updates, ev.Type, ev.Err)
	}
	if ev := firstEvent(t, watchFrom(t, unbounded, cfg, first, false)); ev.Type != watch.Modified || ev.Object.ResourceVersion <= first {
		t.Fatalf("unbounded history, watch from %d: want the first update, got %v %v", first, ev.Type, ev.Err)
	}
	// The newest events are kept: a watch from two updates ago gets both.
	from := rvs[updates-3]
	w := watchFrom(t, bounded, cfg, from, false)
	for _, want := range rvs[updates-2:] {
		ev := firstEvent(t, w)
		if ev.Type != watch.Modified || ev.Object.ResourceVersion != want {
			t.Fatalf("bounded history, watch from %d: want MODIFIED at %d, got %v %v", from, want, ev.Type, ev.Err)
		}
	}
}

// waitFresh waits until the cache has every write made so far (a
// consistent list waits for it).
func waitFresh(t *testing.T, c *cacher.Cacher, cfg storage.Config) {
	t.Helper()
	if _, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}); err != nil {
		t.Fatal(err)
	}
}

func firstEvent(t *testing.T, w storage.Watcher) storage.Event {
	t.Helper()
	select {
	case ev := <-w.ResultChan():
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
		return storage.Event{}
	}
}
