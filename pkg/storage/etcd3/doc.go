// Package etcd3 implements storage.Interface over an etcd v3 client: the raw
// store that the registry uses directly when the watch cache is off for a
// resource, and that the cacher lists and watches otherwise.
//
// Objects are stored without metadata.resourceVersion, in the media type
// of the store's storage.Codec (JSON, YAML or kube's protobuf), and handed
// upwards as JSON whatever was stored; the revision
// of an object is the etcd ModRevision of its key, and the revision of a
// list is the etcd revision it was read at. It imports only storage (and the
// etcd client): etcd3 -> storage.
package etcd3
