package cacher_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestWrittenObjectsNotDecodedAgain: an object written through the cache
// (CreateObject, GuaranteedUpdateObject) is cached with the labels and
// fields of the object the store encoded: the reflector does not decode
// its event again for them, and watches and lists select it by them as
// before.
func TestWrittenObjectsNotDecodedAgain(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	var mu sync.Mutex
	attrsOf := map[runtime.Object]int{} // the objects AttrFunc was given, and how often
	cfg.AttrFunc = func(obj runtime.Object) (labels.Set, fields.Set, error) {
		mu.Lock()
		attrsOf[obj]++
		mu.Unlock()
		return storagetest.PodAttrs(obj)
	}
	c := newCacher(t, etcd, cfg)
	ctx := context.Background()
	rev, err := c.CurrentResourceVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Watch(ctx, cfg.ResourcePrefix, storage.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10), Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.OneTermEqualSelector("spec.nodeName", "n1"), GetAttrs: cfg.AttrFunc}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	key := cfg.ResourcePrefix + "/ns/a"

	created := &corev1.Pod{}
	if _, err := c.CreateObject(ctx, key, storagetest.NewPod("ns", "a", "n1", map[string]string{"app": "web"}), created, 0); err != nil {
		t.Fatal(err)
	}
	// A read at "0" waits for the writes made through the cache.
	if got, err := c.GetObject(ctx, key, storage.GetOptions{ResourceVersion: "0"}); err != nil || got.ResourceVersion != mustRV(t, created) {
		t.Fatalf("read at \"0\" after the create: %v, %v", got, err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added || ev.Object.Key != key {
		t.Fatalf("watch on spec.nodeName=n1: got %v %v, want ADDED %s", ev.Type, ev.Object, key)
	}
	moved := &corev1.Pod{}
	_, err = c.GuaranteedUpdateObject(ctx, key, moved, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		p := in.(*corev1.Pod)
		p.Spec.NodeName = "n2"
		return p, nil, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Deleted || ev.Object.Key != key {
		t.Fatalf("watch on spec.nodeName=n1 after the pod moved: got %v %v, want DELETED %s", ev.Type, ev.Object, key)
	}
	list, err := c.GetList(ctx, cfg.ResourcePrefix, storage.ListOptions{ResourceVersion: moved.ResourceVersion, Recursive: true,
		Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"}), Field: fields.OneTermEqualSelector("spec.nodeName", "n2"), GetAttrs: cfg.AttrFunc}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].ResourceVersion != mustRV(t, moved) {
		t.Fatalf("list app=web on n2: %d items, want the moved pod", len(list.Items))
	}

	mu.Lock()
	defer mu.Unlock()
	if len(attrsOf) != 2 {
		t.Fatalf("AttrFunc ran on %d objects, want once on each object written and never on a decoded event", len(attrsOf))
	}
	for obj, n := range attrsOf {
		if n != 1 || obj == runtime.Object(created) || obj == runtime.Object(moved) {
			t.Fatalf("AttrFunc ran %d times on %p (results %p, %p), want once on each object the store encoded", n, obj, created, moved)
		}
	}
}

func mustRV(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}
