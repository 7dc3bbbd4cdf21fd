package follow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, ignoredGoroutines()...) }

// fast paces the tests' relists: they wait on relists, not on the
// default's 100 ms.
var fast = backoff.Policy{Initial: time.Millisecond, Max: 10 * time.Millisecond, Reset: time.Second}

// stores are the two kinds of store a loop follows: a resource's raw
// etcd3 store, and the same behind a watch cache.
var stores = []struct {
	name   string
	cached bool
}{{"etcd3", false}, {"watch cache", true}}

// TestFirstList: the first list holds what the store held, Synced closes
// after the handler took it, and no event repeats it.
func TestFirstList(t *testing.T) {
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cached, 0)
			for _, name := range []string{"c", "a", "b"} {
				f.create(name, "1")
			}
			r := newRecorder()
			loop := f.start(t, r)
			waitFor(t, "synced", func() bool { return loop.HasSynced() })
			if !follow.WaitSynced(context.Background(), loop) {
				t.Fatal("WaitSynced: false after Synced closed")
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.lists) != 1 {
				t.Fatalf("lists: got %d, want 1", len(r.lists))
			}
			if got, want := r.lists[0].names, []string{"a", "b", "c"}; !slices.Equal(got, want) {
				t.Errorf("listed: got %v, want %v", got, want)
			}
			if r.lists[0].rv < f.rv("c") {
				t.Errorf("list revision %d is older than the last write %d", r.lists[0].rv, f.rv("c"))
			}
			if len(r.events) != 0 {
				t.Errorf("events after the list: %v", r.events)
			}
		})
	}
}

// TestEventsInOrder: the changes after the list reach the handler once
// each, in the order they were made.
func TestEventsInOrder(t *testing.T) {
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cached, 0)
			f.create("before", "1")
			r := newRecorder()
			loop := f.start(t, r)
			waitFor(t, "synced", func() bool { return loop.HasSynced() })
			f.create("x", "1")
			f.update("x", "2")
			f.create("y", "1")
			f.delete("x")
			f.update("before", "2")
			want := []string{"ADDED x", "MODIFIED x", "ADDED y", "DELETED x", "MODIFIED before"}
			waitFor(t, "5 events", func() bool { return r.eventCount() >= len(want) })
			r.mu.Lock()
			defer r.mu.Unlock()
			if !slices.Equal(r.events, want) {
				t.Errorf("events: got %v, want %v", r.events, want)
			}
			if len(r.lists) != 1 || len(r.outOfOrder) != 0 {
				t.Errorf("lists %d (want 1), out of order %v", len(r.lists), r.outOfOrder)
			}
		})
	}
}

// TestRelistAfterExpiry: a watch whose start revision the store no longer
// serves (etcd compacted it; the watch cache's history moved past it)
// ends with 410 Gone, and the loop lists again: the changes made
// meanwhile arrive in that list.
func TestRelistAfterExpiry(t *testing.T) {
	for _, tc := range stores {
		t.Run(tc.name, func(t *testing.T) {
			logs := captureLogs(t)
			f := newFixture(t, tc.cached, 10)
			f.create("a", "0")
			r := newRecorder()
			r.gate = make(chan struct{})
			f.start(t, r)
			waitFor(t, "the first list", func() bool { return r.listCount() == 1 })
			// The handler holds the first list: the watch from its
			// revision starts once these are written.
			for i := 1; i <= 20; i++ {
				f.update("a", fmt.Sprint(i))
			}
			f.create("b", "0")
			if !tc.cached {
				f.etcd.Compact(f.rv("b"))
			}
			close(r.gate)
			waitFor(t, "a second list", func() bool { return r.listCount() == 2 })
			f.update("b", "1")
			waitFor(t, "the event after it", func() bool { return r.eventCount() == 1 })

			r.mu.Lock()
			defer r.mu.Unlock()
			if got := r.lists[1].names; !slices.Equal(got, []string{"a", "b"}) {
				t.Errorf("second list: got %v, want [a b]", got)
			}
			if got := r.state["a"]; got != f.rv("a") {
				t.Errorf("a: got revision %d, want the last write's %d", got, f.rv("a"))
			}
			if !slices.Equal(r.events, []string{"MODIFIED b"}) || len(r.outOfOrder) != 0 {
				t.Errorf("events %v, out of order %v", r.events, r.outOfOrder)
			}
			if !logs.relistedAfter(storage.IsExpired) {
				t.Errorf("no relist logged for the expired revision: %v", logs.lines())
			}
		})
	}
}

// TestHandlerErrorRelists: an error from the handler ends the round;
// the loop lists again and the handler catches up.
func TestHandlerErrorRelists(t *testing.T) {
	captureLogs(t)
	f := newFixture(t, true, 0)
	r := newRecorder()
	var refused atomic.Bool
	r.before = func() error {
		if refused.CompareAndSwap(false, true) {
			return errors.New("refused")
		}
		return nil
	}
	loop := f.start(t, r)
	waitFor(t, "synced", func() bool { return loop.HasSynced() })
	f.create("a", "1")
	waitFor(t, "a relist holding a", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.lists) == 2 && slices.Equal(r.lists[1].names, []string{"a"})
	})
}

// TestStop: Run returns soon after ctx ends, wherever the loop is; the
// package's goleak check finds nothing of it left.
func TestStop(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) (follow.Source, follow.Handler, backoff.Policy)
	}{
		{"watching", func(t *testing.T) (follow.Source, follow.Handler, backoff.Policy) {
			return newFixture(t, true, 0).store, newRecorder(), fast
		}},
		{"waiting to list again", func(*testing.T) (follow.Source, follow.Handler, backoff.Policy) {
			return failing{}, newRecorder(), backoff.Policy{Initial: time.Hour, Max: time.Hour}
		}},
		{"listing again and again", func(*testing.T) (follow.Source, follow.Handler, backoff.Policy) {
			return failing{}, newRecorder(), backoff.Policy{Initial: time.Nanosecond, Max: time.Nanosecond}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			captureLogs(t) // "listing again and again" logs every try
			src, h, b := tc.setup(t)
			loop := follow.New(follow.Config{Name: t.Name(), Source: src, Handler: h, Backoff: b})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				loop.Run(ctx)
			}()
			time.Sleep(50 * time.Millisecond) // into its wait, its watch, its tries
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return within 5 s of ctx's end")
			}
			if follow.WaitSynced(ctx, loop) != loop.HasSynced() {
				t.Error("WaitSynced on an ended ctx disagrees with HasSynced")
			}
		})
	}
}

// TestChanges: a Changes handler is called after each list and each
// event.
func TestChanges(t *testing.T) {
	f := newFixture(t, true, 0)
	f.create("a", "1")
	calls := make(chan struct{}, 10)
	loop := f.start(t, follow.Changes(func() { calls <- struct{}{} }))
	waitFor(t, "synced", func() bool { return loop.HasSynced() })
	f.update("a", "2")
	f.delete("a")
	for i := range 3 {
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d of 3 (a list, two events) missing", i+1)
		}
	}
}

// TestObjectsWithoutList: an Objects handler without List gets each
// listed object as ADDED, then the events, decoded.
func TestObjectsWithoutList(t *testing.T) {
	f := newFixture(t, false, 0)
	f.create("a", "1")
	got := make(chan string, 10)
	f.start(t, follow.Objects[*corev1.ConfigMap]{
		New: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
		Event: func(t watch.EventType, cm *corev1.ConfigMap) {
			got <- fmt.Sprintf("%s %s=%s", t, cm.Name, cm.Data["v"])
		},
	})
	want := []string{"ADDED a=1", "MODIFIED a=2", "DELETED a=2"}
	for i, w := range want {
		if i == 1 {
			f.update("a", "2")
			f.delete("a")
		}
		select {
		case g := <-got:
			if g != w {
				t.Errorf("call %d: got %q, want %q", i, g, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d (%q) missing", i, w)
		}
	}
}

// failing is a store whose lists fail.
type failing struct{}

func (failing) NewList() runtime.Object { return &corev1.ConfigMapList{} }

func (failing) List(context.Context, *metainternalversion.ListOptions) (*storage.ListResult, error) {
	return nil, storage.NewNotReadyError("configmaps")
}

func (failing) Watch(context.Context, *metainternalversion.ListOptions) (storage.Watcher, error) {
	return nil, storage.NewNotReadyError("configmaps")
}
