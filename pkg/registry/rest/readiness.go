package rest

import (
	"context"
	"time"
)

// readinessPoll is how often WaitForStorageReadiness asks again: a watch
// cache is ready after its first list, a few milliseconds into a start.
const readinessPoll = 5 * time.Millisecond

// WaitForStorageReadiness waits until each of storages that is a
// StorageReadinessChecker is ready, or ctx ends (ctx.Err()). Controllers
// call it before their first list: a list of a watch cache that is not
// ready yet fails ("storage is (re)initializing"), and retrying it after
// their usual backoff would hold the start for that backoff.
func WaitForStorageReadiness(ctx context.Context, storages ...any) error {
	for _, s := range storages {
		checker, ok := s.(StorageReadinessChecker)
		if !ok {
			continue
		}
		for checker.StorageReadiness() != nil {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(readinessPoll):
			}
		}
	}
	return nil
}
