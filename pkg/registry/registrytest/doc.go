// Package registrytest is the registry's per-resource conformance suite,
// after kube's generic/testing Tester: given a resource's storage (a
// generic Store, as its RESTStorageProvider builds it) over a real etcd,
// a valid object and an invalid one, Tester.Run checks the verbs' common
// contract (create, get, list, update, delete, deletecollection, scope,
// status and scale) and reports failures by their kube reason. NewGetter
// and BuildGroup give a test the storage to run it on. Tests only.
//
// It sits in the registry, above generic, and imports no group.
package registrytest
