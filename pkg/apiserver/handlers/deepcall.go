package handlers

import "time"

// runDeep runs f, a deeply recursive computation (the field manager:
// structured-merge-diff walks objects and schemas recursively, ~32 KiB of
// stack for a ConfigMap), on one of a few goroutines whose stacks have
// grown already, and waits for it. Run on the goroutine of the request
// instead (a new one per HTTP/2 request, starting small), it grew and
// copied that stack two or three times per write: 6 % of the server's CPU
// per create in the profiles. When every worker is busy, f runs on the
// caller's goroutine. A panic in f is raised again, with the same value,
// in the caller (whose recovery logs it).
func runDeep(f func()) {
	call := deepCall{f: f, done: make(chan any, 1)}
	select {
	case deepCalls <- call:
	default:
		if !startDeepWorker(call) {
			f()
			return
		}
	}
	if p := <-call.done; p != nil {
		panic(p)
	}
}

type deepCall struct {
	f    func()
	done chan any
}

const (
	// maxDeepWorkers bounds the workers: beyond them, callers run f
	// themselves.
	maxDeepWorkers = 16
	// deepWorkerIdle is how long a worker waits for work before it
	// exits: workers live while writes keep coming, and an idle server
	// keeps none.
	deepWorkerIdle = 100 * time.Millisecond
)

// The pool is the process's, not a server's, on purpose: what it saves
// (grown goroutine stacks) and what bounds it (the CPUs) are the
// process's, as sync.Pool's are; servers side by side in one process
// share it as they share the Go scheduler, and count nothing in it. No
// one needs to own or stop it: a worker exits after deepWorkerIdle
// without work, so a stopped server (or an idle process) leaves none
// running, and goroutine-leak checks at the end of a test see none once
// that long has passed.
var (
	deepCalls   = make(chan deepCall)
	deepWorkers = make(chan struct{}, maxDeepWorkers)
)

// startDeepWorker starts a worker with first as its first call, unless
// there are maxDeepWorkers already.
func startDeepWorker(first deepCall) bool {
	select {
	case deepWorkers <- struct{}{}:
	default:
		return false
	}
	go func() {
		defer func() { <-deepWorkers }()
		first.done <- runRecovered(first.f)
		idle := time.NewTimer(deepWorkerIdle)
		defer idle.Stop()
		for {
			select {
			case call := <-deepCalls:
				call.done <- runRecovered(call.f)
				idle.Reset(deepWorkerIdle)
			case <-idle.C:
				return
			}
		}
	}()
	return true
}

func runRecovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}
