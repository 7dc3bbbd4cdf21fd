// Package registry holds what sits between the HTTP handlers and storage:
// the declaration of a resource and the generic Store it builds
// (registry/generic), the verb interfaces and strategies (registry/rest),
// the request context (registry/request), the conversions between the
// versions a resource is served at (registry/conversion), the
// list-then-watch loop with which the server's own readers of a store
// (controllers, admission, the RBAC cache) follow it (registry/follow),
// and one folder per API group with its resources' declarations and
// strategies and its RESTStorageProvider (registry/core, registry/apps,
// registry/certificates, ...). What several groups share lives in core's
// subpackages: the PodSpec library (core/podspec), core's common checks
// (core/validation), the services' allocators (core/service/...).
//
// Layers: apiserver -> registry -> storage. The registry never imports
// storage/etcd3 or cacher: the store of each resource comes from
// RESTOptions.Decorator, chosen by cmd.
package registry
