package rest

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Written remembers what a request's write stored, so that the handler,
// when it answers with exactly that (the object at its storage version, in
// compact JSON), writes the stored bytes instead of encoding the result
// again, as a GET answers from the cache.
//
// The Store records its result, the object it returns, with the Object
// stored for it. A layer between the Store and the handler that answers
// with something else (another version, a Status, a subresource's kind)
// returns another object, and the handler then encodes what it got:
// Stored matches by identity. Such a layer must never change the Store's
// result in place.
type Written struct {
	mu     sync.Mutex
	result runtime.Object
	stored *storage.Object
}

type writtenKey struct{}

// WithWritten returns ctx carrying a new Written for the request's write.
func WithWritten(ctx context.Context) (context.Context, *Written) {
	w := &Written{}
	return context.WithValue(ctx, writtenKey{}, w), w
}

// RecordWritten notes that result (what the write returns) is the state
// stored as stored, for the handler of ctx's request, if it asked. The
// latest write wins: a request that writes other objects along the way
// (a namespace's defaults) leaves nothing the handler can use, which only
// costs an encoding.
func RecordWritten(ctx context.Context, result runtime.Object, stored *storage.Object) {
	w, ok := ctx.Value(writtenKey{}).(*Written)
	if !ok || stored == nil {
		return
	}
	w.mu.Lock()
	w.result, w.stored = result, stored
	w.mu.Unlock()
}

// Stored returns the stored Object of result, when result is what the
// latest recorded write returned; nil otherwise. A nil Written has none.
func (w *Written) Stored(result runtime.Object) *storage.Object {
	if w == nil || result == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.result != result {
		return nil
	}
	return w.stored
}
