package cacher_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// configMapConfig is the storage config of ConfigMaps under a fresh prefix.
func configMapConfig(prefix string) storage.Config {
	cfg := storage.Config{
		Resource:       "configmaps",
		ResourcePrefix: prefix,
		NewFunc:        func() k8sruntime.Object { return &corev1.ConfigMap{} },
		AttrFunc:       generic.DefaultAttrFunc(true),
	}
	return cfg
}

// configMapStore starts an etcd and returns the raw store of ConfigMaps
// on it, under /registry/configmaps.
func configMapStore(b testing.TB) (storage.Interface, storage.Config) {
	etcd := etcdtest.Start(b)
	cfg := configMapConfig("/registry/configmaps")
	return etcd3.New(etcd.Client, cfg), cfg
}

// fillConfigMaps writes n ConfigMaps of size bytes of data with a label
// bucket=i%100 (the load tool's shape), returning their mean encoded size.
func fillConfigMaps(b testing.TB, s storage.Interface, prefix string, n, size int) int {
	b.Helper()
	ctx := context.Background()
	data := strings.Repeat("x", size)
	total := 0
	for i := range n {
		cm := &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("bench-%d", i), Namespace: "bench", UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)),
				Labels: map[string]string{"bucket": fmt.Sprint(i % 100)}, CreationTimestamp: metav1.Now(),
			},
			Data: map[string]string{"data": data},
		}
		encoded, _ := storage.Encode(cm.DeepCopy())
		total += len(encoded)
		if err := s.Create(ctx, fmt.Sprintf("%s/bench/bench-%d", prefix, i), cm, &corev1.ConfigMap{}, 0); err != nil {
			b.Fatal(err)
		}
	}
	return total / n
}

func waitCached(b testing.TB, c *cacher.Cacher, prefix string, n int) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := c.GetList(context.Background(), prefix, storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything})
		if err == nil && len(res.Items) == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("cache has not got the %d objects", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkCacheMemoryPerObject measures the heap the cache holds per
// object (bytes/object) against the object's encoded JSON size
// (encoded-bytes/object): the design bound is 1.5x. "budget" is the
// server's configuration (objects that may remember their protobuf
// encoding: the room for it, before any protobuf LIST asked).
func BenchmarkCacheMemoryPerObject(b *testing.B) {
	const n = 10000
	raw, cfg := configMapStore(b)
	prefix := cfg.ResourcePrefix
	encoded := fillConfigMaps(b, raw, prefix, n, 1024)
	for _, budget := range []*storage.EncodingBudget{nil, storage.NewEncodingBudget(64 << 20)} {
		name := "no-budget"
		if budget != nil {
			name = "budget"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				before := heapInUse()
				c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg, EncodingBudget: budget})
				if err != nil {
					b.Fatal(err)
				}
				waitCached(b, c, prefix, n)
				after := heapInUse()
				b.ReportMetric(float64(after-before)/n, "bytes/object")
				b.ReportMetric(float64(encoded), "encoded-bytes/object")
				b.ReportMetric(float64(after-before)/n/float64(encoded), "ratio")
				c.Stop()
			}
		})
	}
}

func heapInUse() int64 {
	for range 3 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkListFromCache: a LIST of 10,000 1 KiB ConfigMaps at
// resourceVersion 0 from the cache, written out as the JSON response.
func BenchmarkListFromCache(b *testing.B) {
	const n = 10000
	raw, cfg := configMapStore(b)
	prefix := cfg.ResourcePrefix
	fillConfigMaps(b, raw, prefix, n, 1024)
	c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Stop()
	waitCached(b, c, prefix, n)
	for _, tc := range []struct {
		name string
		opts storage.ListOptions
	}{
		{"rv=0", storage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: storage.Everything}},
		{"consistent", storage.ListOptions{Recursive: true, Predicate: storage.Everything}},
		{"selector-1%", storage.ListOptions{ResourceVersion: "0", Recursive: true,
			Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"bucket": "7"}), Field: fields.Everything()}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.GetList(context.Background(), prefix+"/bench", tc.opts)
				if err != nil {
					b.Fatal(err)
				}
				buf := make([]byte, 0, 64*1024)
				for _, item := range res.Items {
					buf = item.AppendJSON(buf, false)
					if len(buf) > 32*1024 {
						io.Discard.Write(buf)
						buf = buf[:0]
					}
				}
			}
		})
	}
	// Paging through all of them, 500 a page, as an informer lists: every
	// page tells how many objects follow it.
	b.Run("paged-500", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			token := ""
			for {
				res, err := c.GetList(context.Background(), prefix, storage.ListOptions{Recursive: true,
					Predicate: storage.SelectionPredicate{Limit: 500, Continue: token, Label: labels.Everything(), Field: fields.Everything()}})
				if err != nil {
					b.Fatal(err)
				}
				if token = res.Continue; token == "" {
					break
				}
			}
		}
	})
}

// BenchmarkDispatch: one event dispatched to 100 or 1,000 watchers and
// received by each, read from ResultChan or pulled (storage.NextEvent, as
// the HTTP handler reads).
func BenchmarkDispatch(b *testing.B) {
	for _, tc := range []struct {
		watchers int
		pull     bool
	}{{100, false}, {1000, false}, {100, true}, {1000, true}} {
		watchers, name := tc.watchers, fmt.Sprintf("watchers=%d", tc.watchers)
		if tc.pull {
			name += "/pulled"
		}
		b.Run(name, func(b *testing.B) {
			raw, cfg := configMapStore(b)
			prefix := cfg.ResourcePrefix
			fillConfigMaps(b, raw, prefix, 1, 1024)
			c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Stop()
			waitCached(b, c, prefix, 1)
			received := make(chan struct{}, watchers*4)
			for range watchers {
				w, err := c.Watch(context.Background(), prefix, storage.ListOptions{
					ResourceVersion: "0", Recursive: true, Predicate: storage.Everything, SendInitialEvents: ptrFalse(),
				})
				if err != nil {
					b.Fatal(err)
				}
				defer w.Stop()
				go func() {
					if !tc.pull {
						for range w.ResultChan() {
							received <- struct{}{}
						}
						return
					}
					// As the HTTP handler reads: in the reader's
					// goroutine, straight from the watcher's buffer.
					for {
						if _, status := storage.NextEvent(context.Background(), w, true); status != storage.Got {
							return
						}
						received <- struct{}{}
					}
				}()
			}
			ctx := context.Background()
			cm := &corev1.ConfigMap{}
			key := prefix + "/bench/bench-0"
			if err := raw.Get(ctx, key, storage.GetOptions{}, cm); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				cm.Data["data"] = fmt.Sprint(i)
				cm.ResourceVersion = ""
				out := &corev1.ConfigMap{}
				if err := raw.GuaranteedUpdate(ctx, key, out, false, nil, func(k8sruntime.Object, storage.ResponseMeta) (k8sruntime.Object, *uint64, error) {
					return cm.DeepCopy(), nil, nil
				}, nil); err != nil {
					b.Fatal(err)
				}
				for range watchers {
					<-received
				}
			}
		})
	}
}

func ptrFalse() *bool { f := false; return &f }

// BenchmarkSelectorMatch: matching one cached object's attributes against
// a label and a field selector.
func BenchmarkSelectorMatch(b *testing.B) {
	pred := storage.SelectionPredicate{
		Label: labels.SelectorFromSet(labels.Set{"bucket": "7"}),
		Field: fields.OneTermEqualSelector("metadata.namespace", "bench"),
	}
	l := labels.Set{"bucket": "7", "app": "web"}
	f := fields.Set{"metadata.name": "bench-7", "metadata.namespace": "bench"}
	b.ReportAllocs()
	for b.Loop() {
		if !pred.MatchesAttrs(l, f) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkHistoryMemory measures the heap a cache's event history holds
// (history-MiB) after n ConfigMaps of 4 KiB are created, updated twice
// and deleted (written-MiB: the encoded objects of those events): the
// cache's store is empty again, only the history holds them. Unbounded
// (kube's sizing: every event younger than 75 s is kept), and with
// HistoryBytes bounding it. A deletion's event shares the stored entry's
// bytes rather than holding the store's copy of the last state.
func BenchmarkHistoryMemory(b *testing.B) {
	const n, size = 1000, 4096
	for _, bound := range []int64{0, 4 << 20} {
		b.Run(fmt.Sprintf("history-bytes=%d", bound), func(b *testing.B) {
			for b.Loop() {
				retained, written := historyMemory(b, n, size, bound)
				b.ReportMetric(float64(retained)/(1<<20), "history-MiB")
				b.ReportMetric(float64(written)/(1<<20), "written-MiB")
			}
		})
	}
}

// historyMemory runs one round of BenchmarkHistoryMemory on a fresh etcd:
// the heap the cache holds once its store is empty again (measured as
// what stopping it frees), and the bytes of the objects written.
func historyMemory(b *testing.B, n, size int, bound int64) (retained, written int64) {
	raw, cfg := configMapStore(b)
	prefix := cfg.ResourcePrefix
	c, err := cacher.New(cacher.Config{Storage: raw, Resource: cfg, HistoryBytes: bound})
	if err != nil {
		b.Fatal(err)
	}
	// The cache must become garbage once stopped: nothing may keep a
	// reference to it past the measure.
	running := &c
	defer func() {
		if *running != nil {
			(*running).Stop()
		}
	}()
	waitCached(b, c, prefix, 0)
	ctx := context.Background()
	encoded := fillConfigMaps(b, raw, prefix, n, size)
	for round := range 2 {
		for i := range n {
			key := fmt.Sprintf("%s/bench/bench-%d", prefix, i)
			err := raw.GuaranteedUpdate(ctx, key, &corev1.ConfigMap{}, false, nil,
				func(in k8sruntime.Object, _ storage.ResponseMeta) (k8sruntime.Object, *uint64, error) {
					cm := in.(*corev1.ConfigMap)
					cm.Labels["round"] = fmt.Sprint(round)
					return cm, nil, nil
				}, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range n {
		if err := raw.Delete(ctx, fmt.Sprintf("%s/bench/bench-%d", prefix, i), &corev1.ConfigMap{}, nil, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	waitCached(b, c, prefix, 0)
	// A consistent list waits until the cache has every event.
	if _, err := c.GetList(ctx, prefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}); err != nil {
		b.Fatal(err)
	}
	held := heapInUse()
	c.Stop()
	c = nil
	// The cache's goroutines may still be ending after Stop returns.
	after := heapInUse()
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		after = min(after, heapInUse())
	}
	return held - after, int64(4 * n * encoded)
}
