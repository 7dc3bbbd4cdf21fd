// Package cacher is the watch cache: a Cacher decorates any
// storage.Interface (the etcd3 store) and answers LIST, WATCH and GET with a
// resourceVersion from memory, while writes go straight through.
//
// The parts, as in kube-apiserver's cacher (see DESIGN.md):
//   - the reflector lists and watches the underlying store and feeds every
//     event to the watchCache;
//   - the watchCache keeps the current objects (a copy-on-write B-tree
//     ordered by key, with an index per trigger field) and a ring buffer of
//     recent events (the history watches start from); its lock is taken
//     in watchcache.go only, whose methods hand readers consistent views;
//   - paginated lists read snapshots of the store, kept for their
//     continue tokens (pages.go);
//   - dispatchEvents hands each event to the cacheWatchers that care,
//     never blocking on a slow one, and sends bookmarks;
//   - each cacheWatcher filters and converts events for its client: its
//     own goroutine delivers the initial events, then, for a client that
//     pulls (storage.Puller, as the HTTP handler does), the client's
//     goroutine takes live events straight from the watcher's buffer.
//     kube keeps a goroutine per watcher for the whole watch; one handoff
//     fewer per event and watcher is ~25 % of a fan-out's cost.
//
// Unlike kube's, the cache keeps no decoded objects: per object it holds
// the storage.Object (the stored JSON bytes, shared by every list and
// watcher) and the labels and selectable fields filtering needs.
//
// Layers: cacher -> storage. It imports nothing else of this project but
// leaf packages (backoff, periodic, metrics).
package cacher
