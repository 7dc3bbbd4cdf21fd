// Package follow keeps a caller up to date with a store, as kube's
// informers keep controllers: it lists the store, then watches it from
// the list's revision, and lists again whenever the watch ends (410 Gone
// after a compaction, a watch cache that re-listed or dropped a slow
// watcher, any error), pacing the lists after failures with one backoff
// policy. The caller gets the lists and the events in order, from one
// goroutine, through a Handler, and can gate its readiness on the first
// list (Synced).
//
// The controllers, the admission sources, flow control and the RBAC
// policy cache follow the stores they read with it.
//
// Layers: part of the registry: it reads through the registry's verbs
// (rest.Lister, rest.Watcher), so from a resource's watch cache when it
// has one. Anything above the registry (controllers, apiserver) and the
// registry's own packages may use it.
package follow
