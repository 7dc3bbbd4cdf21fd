package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/miniapiserver/miniapiserver/pkg/periodic"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Runs repeat until the context ends; after wait returns, none starts.
func TestEveryRunsUntilCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	three := make(chan struct{})
	wait := periodic.Every(ctx, 0, time.Millisecond, func() {
		if runs.Add(1) == 3 {
			close(three)
		}
	})
	select {
	case <-three:
	case <-time.After(30 * time.Second):
		t.Fatal("fewer than 3 runs in 30 s")
	}
	cancel()
	wait()
	after := runs.Load()
	time.Sleep(20 * time.Millisecond)
	if got := runs.Load(); got != after {
		t.Fatalf("%d runs after wait returned", got-after)
	}
}

// wait waits for the run in progress.
func TestWaitWaitsForTheRunInProgress(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	var once atomic.Bool
	wait := periodic.Every(ctx, 0, time.Millisecond, func() {
		if once.Swap(true) {
			return
		}
		close(started)
		<-release
		finished.Store(true)
	})
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("no run in 30 s")
	}
	cancel()
	go func() { time.Sleep(10 * time.Millisecond); close(release) }()
	wait()
	if !finished.Load() {
		t.Fatal("wait returned while a run was in progress")
	}
}

// A context ended before the first period runs nothing.
func TestEveryCancelledBeforeFirstRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var runs atomic.Int32
	wait := periodic.Every(ctx, 5*time.Millisecond, 5*time.Millisecond, func() { runs.Add(1) })
	cancel()
	wait()
	time.Sleep(20 * time.Millisecond)
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d runs after cancel before the first period", n)
	}
}
