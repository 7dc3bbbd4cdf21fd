package storagetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// eventTimeout bounds every wait for an event: a missing event fails the
// test instead of hanging it.
const eventTimeout = 10 * time.Second

func (f *fixture) watch(opts storage.ListOptions) storage.Watcher {
	f.t.Helper()
	opts = recursivePods(opts)
	w, err := f.s.Watch(f.ctx, f.cfg.ResourcePrefix, opts)
	if err != nil {
		f.t.Fatalf("watch: %v", err)
	}
	f.t.Cleanup(w.Stop)
	return w
}

// NextEvent returns the next event of w, skipping bookmarks unless wanted;
// it fails the test when none comes within 10 s.
func NextEvent(t *testing.T, w storage.Watcher, bookmarks bool) storage.Event {
	t.Helper()
	deadline := time.After(eventTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed while waiting for an event")
			}
			if ev.Type == watch.Bookmark && !bookmarks {
				continue
			}
			return ev
		case <-deadline:
			t.Fatal("no event in time")
		}
	}
}

// describe is "TYPE ns/name label-v" for an event.
func describe(t *testing.T, ev storage.Event) string {
	t.Helper()
	if ev.Object == nil {
		return string(ev.Type)
	}
	p := &corev1.Pod{}
	if err := ev.Object.Decode(p); err != nil {
		t.Fatal(err)
	}
	if p.ResourceVersion != strconv.FormatInt(ev.Object.ResourceVersion, 10) {
		t.Fatalf("event object at %s, event at %d", p.ResourceVersion, ev.Object.ResourceVersion)
	}
	return fmt.Sprintf("%s %s/%s %s", ev.Type, p.Namespace, p.Name, p.Labels["v"])
}

// expectEvents reads len(want) events, which must come in revision order.
func expectEvents(t *testing.T, w storage.Watcher, want ...string) []storage.Event {
	t.Helper()
	return expect(t, w, true, want)
}

// expectInitial reads the initial events of a watch: ordered by key, so
// their revisions may go back and forth.
func expectInitial(t *testing.T, w storage.Watcher, want ...string) []storage.Event {
	t.Helper()
	return expect(t, w, false, want)
}

func expect(t *testing.T, w storage.Watcher, ordered bool, want []string) []storage.Event {
	t.Helper()
	var got []storage.Event
	var last int64
	for _, wantDesc := range want {
		ev := NextEvent(t, w, false)
		if d := describe(t, ev); d != wantDesc {
			t.Fatalf("event %d: got %q, want %q", len(got), d, wantDesc)
		}
		if ordered && ev.Object.ResourceVersion < last {
			t.Fatalf("event at %d after an event at %d", ev.Object.ResourceVersion, last)
		}
		last = ev.Object.ResourceVersion
		got = append(got, ev)
	}
	return got
}

func testWatch(t *testing.T, h Harness) {
	f := newFixture(t, h)
	start := rvOf(t, f.create("ns", "before", "", map[string]string{"v": "0"}))
	w := f.watch(storage.ListOptions{ResourceVersion: strconv.FormatInt(start, 10)})
	f.create("ns", "a", "", map[string]string{"v": "1"})
	f.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
	deleted := f.delete("ns", "a")
	evs := expectEvents(t, w, "ADDED ns/a 1", "MODIFIED ns/a 2", "DELETED ns/a 2")
	if evs[2].Object.ResourceVersion != rvOf(t, deleted) {
		t.Fatalf("DELETED at %d, the delete was at %s", evs[2].Object.ResourceVersion, deleted.ResourceVersion)
	}

	t.Run("one namespace", func(t *testing.T) {
		w, err := f.s.Watch(f.ctx, f.cfg.ResourcePrefix+"/other", storage.ListOptions{
			Recursive: true, ResourceVersion: strconv.FormatInt(start, 10), Predicate: storage.Everything,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		f.create("ns", "skipped", "", nil)
		f.create("other", "seen", "", map[string]string{"v": "x"})
		expectEvents(t, w, "ADDED other/seen x")
	})
	t.Run("single key", func(t *testing.T) {
		w, err := f.s.Watch(f.ctx, f.key("ns", "solo"), storage.ListOptions{
			ResourceVersion: strconv.FormatInt(start, 10), Predicate: storage.Everything,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		f.create("ns", "solo-not", "", nil)
		f.create("ns", "solo", "", map[string]string{"v": "s"})
		expectEvents(t, w, "ADDED ns/solo s")
	})
}

func testWatchInitialEvents(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.create("ns", "a", "", map[string]string{"v": "1"})
	f.create("ns", "b", "", map[string]string{"v": "1"})

	t.Run("resourceVersion 0 starts with the current state", func(t *testing.T) {
		w := f.watch(storage.ListOptions{ResourceVersion: "0"})
		expectInitial(t, w, "ADDED ns/a 1", "ADDED ns/b 1")
		f.update("ns", "a", func(p *corev1.Pod) { p.Labels["v"] = "2" })
		expectEvents(t, w, "MODIFIED ns/a 2")
	})
	t.Run("sendInitialEvents ends with a bookmark", func(t *testing.T) {
		yes := true
		w := f.watch(storage.ListOptions{SendInitialEvents: &yes, ProgressNotify: true})
		evs := expectInitial(t, w, "ADDED ns/a 2", "ADDED ns/b 1")
		bm := NextEvent(t, w, true)
		for bm.Type == watch.Bookmark && !bm.InitialEventsEnd {
			bm = NextEvent(t, w, true) // periodic bookmarks may come first
		}
		if bm.Type != watch.Bookmark || !bm.InitialEventsEnd {
			t.Fatalf("want the initial-events-end bookmark, got %s", bm.Type)
		}
		if bm.ResourceVersion < max(evs[0].Object.ResourceVersion, evs[1].Object.ResourceVersion) {
			t.Fatalf("bookmark at %d before the initial events", bm.ResourceVersion)
		}
		f.create("ns", "c", "", map[string]string{"v": "1"})
		expectEvents(t, w, "ADDED ns/c 1")
	})
	t.Run("sendInitialEvents=false starts now", func(t *testing.T) {
		no := false
		w := f.watch(storage.ListOptions{SendInitialEvents: &no})
		f.create("ns", "d", "", map[string]string{"v": "1"})
		expectEvents(t, w, "ADDED ns/d 1")
	})
}

// testWatchBookmarksOnlyWhenAsked: progress notifications requested on
// the store (what a cache asks for a consistent read) reach only the
// watches that allow bookmarks; the others see their changes alone.
func testWatchBookmarksOnlyWhenAsked(t *testing.T, h Harness) {
	f := newFixture(t, h)
	start := strconv.FormatInt(rvOf(t, f.create("ns", "a", "", nil)), 10)
	plain := f.watch(storage.ListOptions{ResourceVersion: start})
	withBookmarks := f.watch(storage.ListOptions{ResourceVersion: start, ProgressNotify: true})
	// Both watches are open once they have seen a change.
	f.create("ns", "b", "", map[string]string{"v": "1"})
	expectEvents(t, plain, "ADDED ns/b 1")
	expectEvents(t, withBookmarks, "ADDED ns/b 1")
	requester, _ := f.s.(storage.ProgressRequester)
	for range 3 {
		if requester != nil {
			if err := requester.RequestWatchProgress(f.ctx); err != nil {
				t.Fatal(err)
			}
		}
		f.list(storage.ListOptions{}) // a consistent read
	}
	f.create("ns", "c", "", map[string]string{"v": "1"})
	if ev := NextEvent(t, plain, true); ev.Type != watch.Added {
		t.Fatalf("watch without bookmarks: got %s, want ADDED ns/c 1", ev.Type)
	}
	expectEvents(t, withBookmarks, "ADDED ns/c 1")
}

func testWatchSelectorTransitions(t *testing.T, h Harness) {
	f := newFixture(t, h)
	start := rvOf(t, f.create("ns", "x", "", map[string]string{"app": "other"}))
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	w := f.watch(storage.ListOptions{
		ResourceVersion: strconv.FormatInt(start, 10),
		Predicate:       storage.SelectionPredicate{Label: sel},
	})
	f.update("ns", "x", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web", "v": "in"} })
	f.update("ns", "x", func(p *corev1.Pod) { p.Labels["v"] = "still" })
	left := f.update("ns", "x", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other", "v": "out"} })
	f.update("ns", "x", func(p *corev1.Pod) { p.Labels["v"] = "unseen" })
	f.create("ns", "y", "", map[string]string{"app": "web", "v": "y"})
	evs := expectEvents(t, w, "ADDED ns/x in", "MODIFIED ns/x still", "DELETED ns/x still", "ADDED ns/y y")
	if evs[2].Object.ResourceVersion != rvOf(t, left) {
		t.Fatalf("leaving DELETED at %d, the update was at %s", evs[2].Object.ResourceVersion, left.ResourceVersion)
	}
}

func testWatchCompacted(t *testing.T, h Harness) {
	f := newFixture(t, h)
	start := rvOf(t, f.create("ns", "a", "", nil))
	for i := range 3 {
		f.update("ns", "a", func(p *corev1.Pod) { p.Labels = map[string]string{"v": strconv.Itoa(i)} })
	}
	latest := f.list(storage.ListOptions{})
	h.Compact(t, latest.ResourceVersion)
	// A cache may hold a short history of its own beyond etcd's; a watch
	// from far enough back is expired everywhere.
	w := f.watch(storage.ListOptions{ResourceVersion: strconv.FormatInt(start-1, 10)})
	ev := NextEvent(t, w, false)
	if ev.Type != watch.Error || !storage.IsExpired(ev.Err) {
		t.Fatalf("want an Expired error event, got %s %v", ev.Type, ev.Err)
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("events after the error event")
		}
	case <-time.After(eventTimeout):
		t.Fatal("watch not closed after its error event")
	}
}

func testWatchStop(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.create("ns", "a", "", nil)
	for _, tc := range []struct {
		name string
		stop func(storage.Watcher, context.CancelFunc)
	}{
		{"Stop", func(w storage.Watcher, _ context.CancelFunc) { w.Stop(); w.Stop() }},
		{"context", func(_ storage.Watcher, cancel context.CancelFunc) { cancel() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(f.ctx)
			defer cancel()
			w, err := f.s.Watch(ctx, f.cfg.ResourcePrefix, storage.ListOptions{
				Recursive: true, ResourceVersion: "0", Predicate: storage.Everything,
			})
			if err != nil {
				t.Fatal(err)
			}
			tc.stop(w, cancel)
			deadline := time.After(eventTimeout)
			for {
				select {
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
				case <-deadline:
					t.Fatal("result channel not closed after stop")
				}
			}
		})
	}
}
