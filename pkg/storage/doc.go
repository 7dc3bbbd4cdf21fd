// Package storage defines the storage layer of miniapiserver: the small
// storage.Interface that the generic registry stores objects through, its
// typed errors, list and watch options, and the encoded Object that lists and
// watches hand upwards.
//
// It sits at the bottom of the layers (cmd -> apiserver -> registry ->
// storage <- cacher, storage/etcd3 -> storage): it knows nothing of HTTP,
// routes or registries. Two packages implement Interface: storage/etcd3 (the
// raw store over an etcd client) and cacher (the watch cache that decorates
// any Interface).
package storage
