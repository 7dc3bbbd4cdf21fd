// Package etcd3 implements storage.Interface over an etcd v3 client: the raw
// store that the registry uses directly when the watch cache is off for a
// resource, and that the cacher lists and watches otherwise.
//
// Objects are stored as JSON without metadata.resourceVersion; the revision
// of an object is the etcd ModRevision of its key, and the revision of a
// list is the etcd revision it was read at. It imports only storage (and the
// etcd client): etcd3 -> storage.
package etcd3
