package follow_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
)

// TestStress: loops follow a watch cache while writers create, update and
// delete objects; one loop's handler stalls now and then (the cache ends
// its watch when its buffer fills, and it lists again: its first stall
// lasts until the writers are done), one fails now and then, another is
// stopped and started again. In the end every handler
// holds what the store holds, and no round handed on an event out of
// order. Bounded: 3 writers of 150 writes each, 3 starts.
func TestStress(t *testing.T) {
	captureLogs(t) // the slow loop's relists
	f := newFixture(t, true, 0)
	steady, slow, failing := newRecorder(), newRecorder(), newRecorder()
	written := make(chan struct{})
	var stalled atomic.Bool
	slow.before = func() error {
		if stalled.CompareAndSwap(false, true) {
			<-written
		} else if rand.IntN(100) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
	failing.before = func() error {
		if rand.IntN(50) == 0 {
			return errors.New("refused")
		}
		return nil
	}
	f.start(t, steady)
	f.start(t, slow)
	f.start(t, failing)

	var restarted *recorder
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 3 {
			r := newRecorder()
			ctx, cancel := context.WithCancel(context.Background())
			loop := follow.New(follow.Config{Name: "restarted", Source: f.store, Handler: r, Backoff: fast})
			done := make(chan struct{})
			go func() {
				defer close(done)
				loop.Run(ctx)
			}()
			if i < 2 {
				time.Sleep(time.Duration(20+rand.IntN(30)) * time.Millisecond)
				cancel()
				<-done
				continue
			}
			restarted = r
			t.Cleanup(func() {
				cancel()
				<-done
			})
		}
	})
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Go(func() { write(f, w, 150) })
	}
	writers.Wait()
	close(written)
	wg.Wait()

	want := f.listed(t)
	for name, r := range map[string]*recorder{"steady": steady, "slow": slow, "failing": failing, "restarted": restarted} {
		waitFor(t, name+" to hold the store's content", func() bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			return maps.Equal(r.state, want)
		})
		r.mu.Lock()
		if len(r.outOfOrder) > 0 {
			t.Errorf("%s: events out of order: %v", name, r.outOfOrder)
		}
		t.Logf("%s: %d lists, %d events", name, len(r.lists), len(r.events))
		r.mu.Unlock()
	}
	if slow.listCount() < 2 {
		t.Errorf("the stalled loop listed once: its watch was not ended when it fell behind")
	}
}

// write makes n random writes to writer w's own five objects.
func write(f *fixture, w, n int) {
	exists := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("w%d-%d", w, rand.IntN(5))
		switch {
		case !exists[name]:
			f.create(name, fmt.Sprint(i))
			exists[name] = true
		case rand.IntN(4) == 0:
			f.delete(name)
			exists[name] = false
		default:
			f.update(name, fmt.Sprint(i))
		}
	}
}

// listed is the store's content: each object's revision, by name.
func (f *fixture) listed(t *testing.T) map[string]int64 {
	t.Helper()
	list, err := f.store.List(f.ctx(), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, item := range list.Items {
		out[nameOf(item)] = item.ResourceVersion
	}
	return out
}
