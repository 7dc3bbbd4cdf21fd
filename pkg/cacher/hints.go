package cacher

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// attrHints hold the labels and fields of objects being written through
// the cache, computed from the object the store encodes, so that the
// reflector, when the write's event comes back from etcd, does not decode
// the stored bytes again to find them. The store tells the cache before
// it writes (storage.WriteObserver), so the hint is there whichever comes
// first, the event or the write's answer. A hint serves only an event of
// its key carrying exactly the bytes it was computed for; a write that
// failed leaves one that nothing matches, until its key is written again
// or the hints are full.
type attrHints struct {
	mu    sync.Mutex
	hints map[string]attrHint
}

type attrHint struct {
	data           []byte
	labels, fields pairs
}

// maxAttrHints bounds the hints (writes in flight, and the leftovers of
// failed ones): when full, they are all dropped.
const maxAttrHints = 512

func (h *attrHints) put(key string, hint attrHint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hints == nil {
		h.hints = map[string]attrHint{}
	}
	if _, ok := h.hints[key]; !ok && len(h.hints) >= maxAttrHints {
		clear(h.hints)
	}
	h.hints[key] = hint
}

// take returns, once, the hint of key computed for data.
func (h *attrHints) take(key string, data []byte) (attrHint, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hint, ok := h.hints[key]
	if !ok || !bytes.Equal(hint.data, data) {
		return attrHint{}, false
	}
	delete(h.hints, key)
	return hint, true
}

// reset drops every hint (a re-list).
func (h *attrHints) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.hints)
}

// observing returns ctx whose writes of the cache's objects leave hints.
func (c *Cacher) observing(ctx context.Context) context.Context {
	return storage.WithWriteObserver(ctx, c.observer)
}

// observeWrite leaves the attributes of obj, about to be stored at key as
// data, for the reflector. Only the cache's typed objects: their labels
// and fields decode from data as they are in obj, while an unstructured
// object's numbers may not (int64 in, float64 out). Writes of other
// resources made under the same context (a hook's) are not the cache's;
// a value JSON cannot hold (invalid UTF-8, replaced when encoded) leaves
// no hint either.
func (c *Cacher) observeWrite(key string, obj runtime.Object, data []byte) {
	if !strings.HasPrefix(key, c.resource.ResourcePrefix+"/") {
		return
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		return
	}
	l, f, err := c.resource.AttrFunc(obj)
	if err != nil {
		return
	}
	for _, set := range []map[string]string{l, f} {
		for k, v := range set {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return
			}
		}
	}
	c.hints.put(key, attrHint{data: data, labels: newPairs(l, key), fields: newPairs(f, key)})
}
