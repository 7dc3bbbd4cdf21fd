package request

import (
	"context"
	"sync"
)

// Warnings collects the warnings of one request; the HTTP layer sends them
// as Warning headers. Safe for concurrent use.
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// WithWarnings returns a context that collects warnings into w.
func WithWarnings(ctx context.Context, w *Warnings) context.Context {
	return context.WithValue(ctx, warningsKey, w)
}

// AddWarning records a warning for the request in ctx; without a collector
// it is dropped. Duplicates are recorded once.
func AddWarning(ctx context.Context, text string) {
	w, ok := ctx.Value(warningsKey).(*Warnings)
	if !ok || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.list {
		if s == text {
			return
		}
	}
	w.list = append(w.list, text)
}

// List returns the warnings recorded so far.
func (w *Warnings) List() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}
