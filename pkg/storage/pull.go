package storage

import "context"

// NextStatus is what NextEvent found.
type NextStatus int

const (
	// Got: the event returned is the watch's next one.
	Got NextStatus = iota
	// Pending: no event is ready yet (only when not waiting).
	Pending
	// Ended: the watch has ended, or ctx has.
	Ended
)

// A Puller is a Watcher whose consumer may take events in its own
// goroutine rather than from ResultChan. The cacher's watchers are
// Pullers: an event then reaches the consumer straight from the
// dispatcher's buffer, without a goroutine of the watcher's own in
// between (one handoff fewer per event and watcher, which is most of the
// cost of a fan-out to many watchers). A consumer uses either Next or
// ResultChan, never both.
type Puller interface {
	Watcher
	// Next returns the next event. With wait it blocks until there is
	// one or the watch or ctx ends; without, it returns Pending at once
	// when no event is ready.
	Next(ctx context.Context, wait bool) (Event, NextStatus)
}

// NextEvent takes w's next event in the caller's goroutine: through Next
// when w is a Puller, else from its ResultChan.
func NextEvent(ctx context.Context, w Watcher, wait bool) (Event, NextStatus) {
	if p, ok := w.(Puller); ok {
		return p.Next(ctx, wait)
	}
	var ev Event
	var ok bool
	if wait {
		select {
		case ev, ok = <-w.ResultChan():
		case <-ctx.Done():
			return Event{}, Ended
		}
	} else {
		select {
		case ev, ok = <-w.ResultChan():
		default:
			return Event{}, Pending
		}
	}
	if !ok {
		return Event{}, Ended
	}
	return ev, Got
}
