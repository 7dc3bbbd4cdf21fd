package cacher

import (
	"sort"
	"time"
)

// Bounds of the event history when its size is not configured, as kube's:
// it grows while every remembered event is younger than eventFreshDuration,
// and shrinks when the newest quarter is older.
const (
	lowerBoundCapacity = 100
	upperBoundCapacity = 100 * 1024
	eventFreshDuration = 75 * time.Second
)

// history is the ring buffer of the most recent events. Not safe for
// concurrent use: the watchCache guards it.
type history struct {
	events     []*event
	start, end int // events live at [start, end), indexes taken modulo len(events)
	fixed      bool
	// oldestRV is the revision after which the history is complete: a
	// watch from any revision >= oldestRV can be served. It starts at the
	// revision of the list the cache was filled from, and moves when events
	// fall off the buffer or etcd compacts.
	oldestRV int64
	// bytes is the size of the objects the events carry (their new or
	// last state; the previous state is an earlier event's, or the
	// store's). maxBytes, when > 0, bounds it: the oldest events fall off
	// past it, however young.
	bytes, maxBytes int64
}

// newHistory returns a history of capacity events, or a self-sizing one
// for capacity <= 0, whose events hold at most maxBytes of objects (no
// bound when <= 0; the newest event is always kept).
func newHistory(capacity int, maxBytes int64) *history {
	h := &history{fixed: capacity > 0, maxBytes: maxBytes}
	if capacity <= 0 {
		capacity = lowerBoundCapacity
	}
	h.events = make([]*event, capacity)
	return h
}

func (h *history) capacity() int { return len(h.events) }
func (h *history) size() int     { return h.end - h.start }
func (h *history) at(i int) *event {
	return h.events[i%len(h.events)]
}

// reset forgets every event: the history now starts at rev (a new list).
func (h *history) reset(rev int64) {
	clear(h.events)
	h.start = h.end
	h.oldestRV = rev
	h.bytes = 0
}

// add appends ev, resizing or dropping the oldest event as needed.
func (h *history) add(ev *event) {
	if !h.fixed {
		h.resize(ev.recordTime)
	}
	if h.size() == len(h.events) {
		h.dropOldest()
	}
	h.events[h.end%len(h.events)] = ev
	h.end++
	h.bytes += int64(ev.cur.obj.Size())
	for h.maxBytes > 0 && h.bytes > h.maxBytes && h.size() > 1 {
		h.dropOldest()
	}
}

// dropOldest forgets the oldest event: a watch from before it can no
// longer be served.
func (h *history) dropOldest() {
	i := h.start % len(h.events)
	h.oldestRV = h.events[i].rv
	h.bytes -= int64(h.events[i].cur.obj.Size())
	h.events[i] = nil
	h.start++
}

func (h *history) resize(now time.Time) {
	if h.size() < len(h.events) {
		return
	}
	switch {
	case now.Sub(h.at(h.start).recordTime) < eventFreshDuration:
		if c := min(2*len(h.events), upperBoundCapacity); c > len(h.events) {
			h.setCapacity(c)
		}
	case now.Sub(h.at(h.end-len(h.events)/4).recordTime) > eventFreshDuration:
		if c := max(len(h.events)/2, lowerBoundCapacity); c < len(h.events) {
			h.setCapacity(c)
		}
	}
}

func (h *history) setCapacity(c int) {
	for h.size() > c {
		h.dropOldest()
	}
	events := make([]*event, c)
	for i := h.start; i < h.end; i++ {
		events[i%c] = h.at(i)
	}
	h.events = events
}

// compact drops the events at or before rev: etcd no longer has them, so
// neither does the cache.
func (h *history) compact(rev int64) {
	for h.size() > 0 && h.at(h.start).rv <= rev {
		h.dropOldest()
	}
	if rev > h.oldestRV {
		h.oldestRV = rev
	}
}

// since returns the events after rev, oldest first, or false when rev is
// older than the history.
func (h *history) since(rev int64) ([]*event, bool) {
	if rev < h.oldestRV {
		return nil, false
	}
	n := h.size()
	first := sort.Search(n, func(i int) bool { return h.at(h.start+i).rv > rev })
	out := make([]*event, 0, n-first)
	for i := h.start + first; i < h.end; i++ {
		out = append(out, h.at(i))
	}
	return out, true
}
