// Package queue holds what the controllers that sync objects by name
// share: the signal that wakes their worker, and the queueing of every
// name after a re-list.
//
// Layers: part of pkg/controllers; it imports nothing of this project.
package queue

import (
	"context"
	"time"
)

// Signal wakes one worker: any number of Notify calls before the worker
// receives from it wake it once, and Notify never blocks. Make it with
// NewSignal.
type Signal chan struct{}

// NewSignal returns a Signal that no one has notified yet.
func NewSignal() Signal { return make(Signal, 1) }

// Notify wakes the worker, unless a wake is pending already.
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// Wait blocks until s is notified, and reports true; or until ctx ends,
// and reports false. A worker's loop is: for s.Wait(ctx) { ... }.
func (s Signal) Wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-s:
		return true
	}
}

// Every calls work each time s is notified and each period, until ctx
// ends; ticked says that the period woke it (the controllers that retry
// their failed names on a tick requeue them then). A nil s is never
// notified: work then runs each period only. A run of work is never
// interrupted: ctx is checked between runs.
func (s Signal) Every(ctx context.Context, period time.Duration, work func(ticked bool)) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		ticked := false
		select {
		case <-ctx.Done():
			return
		case <-s:
		case <-ticker.C:
			ticked = true
		}
		work(ticked)
	}
}

// Relist returns the objects of list by name, and marks pending every one
// of them and every name of known that list lacks (deleted while nobody
// watched): after a re-list, each is synced again.
func Relist[T interface{ GetName() string }](known map[string]T, list []T, pending map[string]bool) map[string]T {
	relisted := make(map[string]T, len(list))
	for _, obj := range list {
		relisted[obj.GetName()] = obj
	}
	for name := range known {
		if _, ok := relisted[name]; !ok {
			pending[name] = true
		}
	}
	for name := range relisted {
		pending[name] = true
	}
	return relisted
}
