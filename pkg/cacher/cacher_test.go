package cacher_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// newCacher starts a cacher over etcd for cfg and waits until it is ready.
func newCacher(t *testing.T, etcd *etcdtest.Etcd, cfg storage.Config, mutate ...func(*cacher.Config)) *cacher.Cacher {
	t.Helper()
	cc := cacher.Config{Storage: etcd3.New(etcd.Client, cfg), Resource: cfg, CompactionCheckPeriod: 200 * time.Millisecond}
	for _, m := range mutate {
		m(&cc)
	}
	c, err := cacher.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	deadline := time.Now().Add(10 * time.Second)
	for c.ReadinessCheck() != nil {
		if time.Now().After(deadline) {
			t.Fatal("cacher not ready in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return c
}

func TestConformance(t *testing.T) {
	etcd := etcdtest.Start(t)
	var mu sync.Mutex
	caches := map[*testing.T][]*cacher.Cacher{}
	storagetest.Run(t, storagetest.Harness{
		New: func(t *testing.T, cfg storage.Config) storage.Interface {
			c := newCacher(t, etcd, cfg)
			mu.Lock()
			caches[t] = append(caches[t], c)
			mu.Unlock()
			return c
		},
		Compact: func(t *testing.T, rev int64) {
			etcd.Compact(rev)
			mu.Lock()
			cs := caches[t]
			mu.Unlock()
			for _, c := range cs {
				waitForCompaction(t, c, rev)
			}
		},
	})
}

// waitForCompaction waits until c has learnt that etcd was compacted at
// rev: a watch from just before rev is refused as expired.
func waitForCompaction(t *testing.T, c *cacher.Cacher, rev int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		w, err := c.Watch(context.Background(), "/", storage.ListOptions{
			ResourceVersion: strconv.FormatInt(rev-1, 10), Recursive: true, Predicate: storage.Everything,
		})
		if err != nil {
			t.Fatal(err)
		}
		var ev storage.Event
		select {
		case ev = <-w.ResultChan():
		case <-time.After(20 * time.Millisecond): // no error: still serving history
		}
		w.Stop()
		if ev.Type == watch.Error && storage.IsExpired(ev.Err) {
			return
		}
	}
	t.Fatalf("the cache did not follow the compaction at %d", rev)
}
