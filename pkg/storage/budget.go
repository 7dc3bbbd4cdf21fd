package storage

import "sync/atomic"

// EncodingBudget bounds the bytes of the encodings that long-lived objects
// (a cache's store) remember, all of them together: an object remembers
// an encoding (Encoded) only while the budget has room for it, and gives
// the room back when it is dropped (Forget). Past the budget, encodings
// are computed on every call, as without one. A cache so keeps its
// memory per object close to the stored bytes plus at most the budget.
type EncodingBudget struct {
	limit int64
	used  atomic.Int64
}

// NewEncodingBudget returns a budget of limit bytes (none when <= 0).
func NewEncodingBudget(limit int64) *EncodingBudget {
	return &EncodingBudget{limit: limit}
}

// Used is how many bytes the remembered encodings hold.
func (b *EncodingBudget) Used() int64 { return b.used.Load() }

// reserve takes n bytes of the budget, if it has them.
func (b *EncodingBudget) reserve(n int) bool {
	for {
		used := b.used.Load()
		if used+int64(n) > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+int64(n)) {
			return true
		}
	}
}

func (b *EncodingBudget) release(n int) { b.used.Add(-int64(n)) }

// Remembering returns a copy of o that remembers the encodings computed
// through Encoded while budget has room (conversions are not remembered).
// Call Forget when the copy leaves the store that holds it. Without a
// budget it returns o.
func (o *Object) Remembering(budget *EncodingBudget) *Object {
	if budget == nil {
		return o
	}
	c := *o
	c.memo = &encodingMemo{budget: budget}
	return &c
}

// Forget drops the encodings o remembers under a budget and gives their
// room back; o remembers nothing more (a reader that still holds it
// encodes on every call). Without a budget it does nothing.
func (o *Object) Forget() {
	if o.memo == nil || o.memo.budget == nil {
		return
	}
	m := o.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.entries {
		m.budget.release(len(e.data))
	}
	m.entries = nil
	m.forgotten = true
}
