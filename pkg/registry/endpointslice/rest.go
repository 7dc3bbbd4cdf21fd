// Package endpointslice serves the discovery.k8s.io group (v1): endpoint
// slices.
package endpointslice

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// EndpointSlices is the EndpointSlices' store: core's services/proxy,
	// the aggregator and the endpoint reconciler read or keep them.
	EndpointSlices *generic.Store
}

// NewRESTStorageProvider returns the provider of discovery.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(discoveryv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{EndpointSlices: s[0]} }, endpointSlices)
}
