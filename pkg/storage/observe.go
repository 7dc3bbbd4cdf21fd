package storage

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// WriteObserver is told, by a store about to write obj at key, the
// encoding it writes (plaintext JSON, without resourceVersion). It runs
// on the writer's goroutine before the write, once per attempt (a write
// that loses a race tries again); the write may still fail. It must not
// modify obj or data.
type WriteObserver func(key string, obj runtime.Object, data []byte)

type writeObserverKey struct{}

// WithWriteObserver returns ctx whose writes o observes. A cache in front
// of a store uses it to learn what its writes store before their events
// come back.
func WithWriteObserver(ctx context.Context, o WriteObserver) context.Context {
	return context.WithValue(ctx, writeObserverKey{}, o)
}

// ObserveWrite tells ctx's WriteObserver, if any, that obj is about to be
// written at key as data.
func ObserveWrite(ctx context.Context, key string, obj runtime.Object, data []byte) {
	if o, ok := ctx.Value(writeObserverKey{}).(WriteObserver); ok {
		o(key, obj, data)
	}
}
