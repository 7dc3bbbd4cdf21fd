// Package coordination serves the coordination.k8s.io group (v1): leases.
package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// Leases is the leases' store: the endpoint reconciler keeps this
	// replica's lease through it.
	Leases *generic.Store
}

// NewRESTStorageProvider returns the provider of coordination.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(coordinationv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{Leases: s[0]} }, leases)
}
