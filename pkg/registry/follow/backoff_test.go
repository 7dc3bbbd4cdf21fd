package follow_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// TestBackoffBounded: lists after failures are paced by the policy
// (doubling, capped, jittered) and the pace starts over after a healthy
// round. The store is a script in memory: synctest's clock measures the
// waits exactly, which a real etcd's network would not let it do.
func TestBackoffBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		captureLogs(t)
		p := backoff.Policy{Initial: time.Second, Max: 8 * time.Second, Jitter: 0.2, Reset: time.Minute}
		// Each round: the list fails (0), or succeeds and its watch
		// ends after that long.
		src := &scripted{rounds: []time.Duration{0, 0, 0, 0, 0, 0, 2 * time.Minute, time.Second, 0}}
		ctx, cancel := context.WithCancel(context.Background())
		loop := follow.New(follow.Config{Name: "scripted", Source: src, Handler: newRecorder(), Backoff: p})
		done := make(chan struct{})
		go func() {
			defer close(done)
			loop.Run(ctx)
		}()
		time.Sleep(time.Hour)
		synctest.Wait()
		cancel()
		<-done

		// The wait before each list after the first, before jitter.
		// Six failures, a healthy round (2 min), a short one, a failure.
		wantBase := []time.Duration{1, 2, 4, 8, 8, 8, 1, 2, 4}
		src.mu.Lock()
		defer src.mu.Unlock()
		if len(src.lists) < len(wantBase)+1 {
			t.Fatalf("lists: got %d, want at least %d", len(src.lists), len(wantBase)+1)
		}
		for i, base := range wantBase {
			base *= time.Second
			waited := src.lists[i+1].Sub(src.lists[i]) - src.ran[i]
			if hi := base + time.Duration(p.Jitter*float64(base)); waited < base || waited > hi {
				t.Errorf("wait before list %d: got %v, want within [%v, %v]", i+2, waited, base, hi)
			}
		}
	})
}

// scripted is a store whose rounds go as its script says, and which
// records when it was listed.
type scripted struct {
	mu     sync.Mutex
	rounds []time.Duration
	lists  []time.Time
	ran    []time.Duration // how long each round lasted
}

func (s *scripted) NewList() runtime.Object { return &corev1.ConfigMapList{} }

func (s *scripted) List(context.Context, *metainternalversion.ListOptions) (*storage.ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = append(s.lists, time.Now())
	i := len(s.lists) - 1
	if i < len(s.rounds) && s.rounds[i] == 0 {
		s.ran = append(s.ran, 0)
		return nil, storage.NewNotReadyError("configmaps")
	}
	return &storage.ListResult{ResourceVersion: int64(i + 1)}, nil
}

// Watch ends after the round's time; after the script, never.
func (s *scripted) Watch(ctx context.Context, _ *metainternalversion.ListOptions) (storage.Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.lists) - 1
	d := time.Duration(1<<63 - 1)
	if i < len(s.rounds) {
		d = s.rounds[i]
	}
	s.ran = append(s.ran, d)
	w := &timedWatch{ch: make(chan storage.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.ch)
		select {
		case <-time.After(d):
		case <-w.stop:
		case <-ctx.Done():
		}
	}()
	return w, nil
}

type timedWatch struct {
	ch       chan storage.Event
	stop     chan struct{}
	stopOnce sync.Once
}

func (w *timedWatch) ResultChan() <-chan storage.Event { return w.ch }
func (w *timedWatch) Stop()                            { w.stopOnce.Do(func() { close(w.stop) }) }
