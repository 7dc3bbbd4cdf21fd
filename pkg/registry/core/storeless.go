package core

import "k8s.io/apimachinery/pkg/runtime"

// storeless is the rest.Storage and rest.Scoper of an endpoint with no
// storage of its own (a subresource whose storage is its resource's, or
// an endpoint computed on request), to embed: New gives an O, Destroy
// has nothing to release, and the endpoint is namespaced unless
// clusterScoped (the zero value suits the pods' and service accounts'
// subresources).
type storeless[O any, P interface {
	*O
	runtime.Object
}] struct{ clusterScoped bool }

// New implements rest.Storage.
func (storeless[O, P]) New() runtime.Object { return P(new(O)) }

// Destroy implements rest.Storage.
func (storeless[O, P]) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (s storeless[O, P]) NamespaceScoped() bool { return !s.clusterScoped }
