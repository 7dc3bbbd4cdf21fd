package request

import "context"

type watchInitKey struct{}

// WithWatchInitSignal returns a context carrying signal, which the
// handler of a watch calls (WatchInitialized) once the watch is
// registered and its initial events are written: API Priority and
// Fairness holds a watch's seats until then only, as kube's does.
// signal may be called more than once.
func WithWatchInitSignal(ctx context.Context, signal func()) context.Context {
	return context.WithValue(ctx, watchInitKey{}, signal)
}

// WatchInitialized calls ctx's watch initialization signal, if any.
func WatchInitialized(ctx context.Context) {
	if signal, ok := ctx.Value(watchInitKey{}).(func()); ok {
		signal()
	}
}
