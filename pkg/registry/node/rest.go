// Package node serves the node.k8s.io group (v1): runtime classes.
package node

import (
	nodev1 "k8s.io/api/node/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// RuntimeClasses is the runtime classes' store, which kube's
	// RuntimeClass admission reads.
	RuntimeClasses *generic.Store
}

// NewRESTStorageProvider returns the provider of node.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(nodev1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{RuntimeClasses: s[0]} }, runtimeClasses)
}
