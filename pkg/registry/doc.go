// Package registry holds what sits between the HTTP handlers and storage:
// the generic Store (registry/generic), the verb interfaces and strategies
// (registry/rest), the request context (registry/request), and one folder
// per API group with its resources' strategies and its RESTStorageProvider
// (registry/core, registry/apps, registry/certificates, ...).
//
// Layers: apiserver -> registry -> storage. The registry never imports
// storage/etcd3 or cacher: the store of each resource comes from
// RESTOptions.Decorator, chosen by cmd.
package registry
