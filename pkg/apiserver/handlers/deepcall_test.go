package handlers

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestRunDeep (not parallel: the workers are the process's): runDeep runs every call once and waits for it, from many
// goroutines at once (more than its workers: the rest run inline), and a
// panic reaches the caller with its value.
func TestRunDeep(t *testing.T) {
	const callers = 4 * maxDeepWorkers
	var wg sync.WaitGroup
	results := make([]int, callers)
	for i := range callers {
		wg.Go(func() {
			for j := range 50 {
				runDeep(func() { results[i] += j })
			}
		})
	}
	wg.Wait()
	for i, r := range results {
		if r != 50*49/2 {
			t.Fatalf("caller %d summed %d, want %d", i, r, 50*49/2)
		}
	}

	want := errors.New("boom")
	got := func() (p any) {
		defer func() { p = recover() }()
		runDeep(func() { panic(want) })
		return nil
	}()
	if got != want {
		t.Fatalf("recovered %v, want the panic's value %v", got, want)
	}
	// The worker that ran the panicking call still serves.
	ran := false
	runDeep(func() { ran = true })
	if !ran {
		t.Fatal("runDeep after a panic did not run its call")
	}
}

// TestDeepWorkersExitWhenIdle: an idle process keeps no worker. (Not
// parallel: the workers are the process's, and other tests write.)
func TestDeepWorkersExitWhenIdle(t *testing.T) {
	runDeep(func() {})
	for i := 0; len(deepWorkers) > 0; i++ {
		if i == 100 {
			t.Fatalf("%d workers still running after %v", len(deepWorkers), 100*deepWorkerIdle/5)
		}
		time.Sleep(deepWorkerIdle / 5)
	}
}
