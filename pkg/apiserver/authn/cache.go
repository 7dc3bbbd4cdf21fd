package authn

import (
	"sync"
	"time"
)

// maxCached bounds each cache of verified credentials.
const maxCached = 4096

// verifiedCache remembers, by a credential's SHA-256, what verifying its
// signature gave, until the given time: a client sends the same
// certificate or token on every request, and a signature check costs far
// more than the rest of a request. Only what depends on the credential
// alone is kept (never whether the objects it names still exist, which
// is checked on each request). Safe for concurrent use.
type verifiedCache[V any] struct {
	mu      sync.Mutex
	entries map[[32]byte]verifiedEntry[V]
}

type verifiedEntry[V any] struct {
	value V
	until time.Time
}

func (c *verifiedCache[V]) get(key [32]byte, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *verifiedCache[V]) put(key [32]byte, v V, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[[32]byte]verifiedEntry[V]{}
	}
	if len(c.entries) >= maxCached {
		// Drop the expired entries, then (still full) any, down to half.
		now := time.Now()
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < maxCached/2 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = verifiedEntry[V]{value: v, until: until}
}
