package cacher_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestEncodingBudgetGivenBack: the cached objects remember their
// encodings within the budget, and an object replaced by an update or
// removed by a delete gives its room back, so that the budget counts what
// the store holds and never fills up with the dead.
func TestEncodingBudgetGivenBack(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	budget := storage.NewEncodingBudget(1 << 20)
	c := newCacher(t, etcd, cfg, func(cc *cacher.Config) { cc.EncodingBudget = budget })
	for i := range 10 {
		create(t, c, cfg, "ns", fmt.Sprintf("p%d", i))
	}
	// encodeAll lists (consistently: the cache has seen every write) and
	// gives every item an encoding of 100 bytes.
	encodeAll := func() {
		t.Helper()
		res, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range res.Items {
			if _, err := item.Encoded("test", func() ([]byte, error) { return make([]byte, 100), nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	encodeAll()
	if used := budget.Used(); used != 1000 {
		t.Fatalf("%d bytes used after encoding 10 items of 100", used)
	}
	encodeAll() // remembered: nothing more
	if used := budget.Used(); used != 1000 {
		t.Fatalf("%d bytes used after encoding them again", used)
	}
	touch(t, c, cfg, "ns", "p0", 1)
	if err := c.Delete(context.Background(), cfg.ResourcePrefix+"/ns/p1", &corev1.Pod{}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The cache applies the update and the delete before a consistent
	// list answers: p0's old state and p1 gave their room back.
	res, err := c.GetList(context.Background(), cfg.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 9 {
		t.Fatalf("%d items after a delete, want 9", len(res.Items))
	}
	if used := budget.Used(); used != 800 {
		t.Fatalf("%d bytes used after an update and a delete, want 800", used)
	}
	encodeAll() // p0's new state
	if used := budget.Used(); used != 900 {
		t.Fatalf("%d bytes used after encoding the updated item, want 900", used)
	}
}
