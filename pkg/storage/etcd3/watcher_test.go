package etcd3_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestWatchWithoutPreviousState: a watch of everything that keeps the last
// states itself gets deletions by key and revision, without the data etcd
// would have read for it; a selective watch still gets the last state,
// which it needs to match.
func TestWatchWithoutPreviousState(t *testing.T) {
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	s := etcd3.New(etcd.Client, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	key := cfg.ResourcePrefix + "/ns/p1"
	created := &corev1.Pod{}
	if err := s.Create(ctx, key, storagetest.NewPod("ns", "p1", "node-a", map[string]string{"app": "x"}), created, 0); err != nil {
		t.Fatal(err)
	}
	watchFrom := func(selector labels.Selector) storage.Watcher {
		w, err := s.Watch(ctx, cfg.ResourcePrefix, storage.ListOptions{
			ResourceVersion:      created.ResourceVersion,
			Recursive:            true,
			WithoutPreviousState: true,
			Predicate:            storage.SelectionPredicate{Label: selector, Field: fields.Everything(), GetAttrs: storagetest.PodAttrs},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		return w
	}
	everything := watchFrom(labels.Everything())
	selective := watchFrom(labels.SelectorFromSet(labels.Set{"app": "x"}))
	if err := s.Delete(ctx, key, &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	rev, err := s.CurrentResourceVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}

	ev := storagetest.NextEvent(t, everything, false)
	if ev.Type != watch.Deleted || ev.Object.Key != key || ev.Object.ResourceVersion != rev {
		t.Fatalf("everything: got %s %s@%d, want DELETED %s@%d", ev.Type, ev.Object.Key, ev.Object.ResourceVersion, key, rev)
	}
	if ev.Object.Data() != nil {
		t.Errorf("everything: the deletion carries %d bytes of state, want none", len(ev.Object.Data()))
	}

	ev = storagetest.NextEvent(t, selective, false)
	if ev.Type != watch.Deleted || ev.Object.ResourceVersion != rev {
		t.Fatalf("selective: got %s@%d, want DELETED@%d", ev.Type, ev.Object.ResourceVersion, rev)
	}
	last := &corev1.Pod{}
	if err := ev.Object.Decode(last); err != nil {
		t.Fatalf("selective: the deletion's last state: %v", err)
	}
	if last.Spec.NodeName != "node-a" || last.Labels["app"] != "x" {
		t.Errorf("selective: last state %+v, want the created pod", last.ObjectMeta)
	}
}
