package filters

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestLimiterRoundRobin: places freed go to the waiting flows in turn,
// however many requests one flow has waiting.
func TestLimiterRoundRobin(t *testing.T) {
	t.Parallel()
	l := NewLimiter(1, 100, time.Minute, nil)
	if !l.Acquire(context.Background(), "a") {
		t.Fatal("the first request waits")
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	// Queue five requests of a, then one of b, one at a time so that the
	// queues hold them in this order.
	for i, flow := range []string{"a", "a", "a", "a", "a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !l.Acquire(context.Background(), flow) {
				t.Errorf("%s refused", flow)
				return
			}
			mu.Lock()
			order = append(order, flow)
			mu.Unlock()
			l.Release()
		}()
		waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return queued(l) == i+1 })
	}
	l.Release() // the first request ends
	wg.Wait()
	// a was first in line, then b: b gets the second place, not the sixth.
	if len(order) != 6 || order[0] != "a" || order[1] != "b" {
		t.Errorf("served in the order %v, want a, b, then the rest of a", order)
	}
}

// TestLimiterRefuses: a full queue refuses at once; a waiter gives up
// after maxWait.
func TestLimiterRefuses(t *testing.T) {
	t.Parallel()
	l := NewLimiter(1, 1, 50*time.Millisecond, nil)
	if !l.Acquire(context.Background(), "a") {
		t.Fatal("refused with a free place")
	}
	done := make(chan bool)
	go func() { done <- l.Acquire(context.Background(), "a") }()
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return queued(l) == 1 })
	if l.Acquire(context.Background(), "a") {
		t.Error("a full queue let a request in")
	}
	if <-done {
		t.Error("a waiter was served while the place stayed taken")
	}
	l.Release()
	if !l.Acquire(context.Background(), "b") {
		t.Error("the freed place was not given")
	}
}

func queued(l *Limiter) int {
	n := 0
	for _, q := range l.waiting {
		n += len(q)
	}
	return n
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
