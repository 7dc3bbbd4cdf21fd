package handlers

// runDeep runs f, a deeply recursive computation (the field manager:
// structured-merge-diff walks objects and schemas recursively, ~32 KiB of
// stack for a ConfigMap), on one of a few long-lived goroutines whose
// stacks have grown already, and waits for it. Run on the goroutine of
// the request instead (a new one per HTTP/2 request, starting small), it
// grew and copied that stack two or three times per write: 6 % of the
// server's CPU per create in the profiles. When every worker is busy, f
// runs on the caller's goroutine. A panic in f is raised again, with the
// same value, in the caller (whose recovery logs it).
func runDeep(f func()) {
	call := deepCall{f: f, done: make(chan any, 1)}
	select {
	case deepCalls <- call:
	default:
		if !startDeepWorker() {
			f()
			return
		}
		deepCalls <- call
	}
	if p := <-call.done; p != nil {
		panic(p)
	}
}

type deepCall struct {
	f    func()
	done chan any
}

// maxDeepWorkers bounds the workers: beyond them, callers run f
// themselves.
const maxDeepWorkers = 16

var (
	deepCalls   = make(chan deepCall)
	deepWorkers = make(chan struct{}, maxDeepWorkers)
)

// startDeepWorker starts a worker, unless there are maxDeepWorkers
// already. Workers live as long as the process: they hold little but
// their stacks.
func startDeepWorker() bool {
	select {
	case deepWorkers <- struct{}{}:
	default:
		return false
	}
	go func() {
		for call := range deepCalls {
			call.done <- runRecovered(call.f)
		}
	}()
	return true
}

func runRecovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}
