// Package scheduling serves the scheduling.k8s.io group (v1): priority
// classes, with kube's system classes (SystemPriorityClasses, created at
// start by cmd) and its refusal to delete them one by one.
package scheduling

import (
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// PriorityClasses is the priority classes' store: kube's Priority
	// admission reads it, and the server creates kube's system classes
	// through it.
	PriorityClasses *generic.Store
}

// NewRESTStorageProvider returns the provider of scheduling.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(schedulingv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{PriorityClasses: s[0]} }, priorityClasses)
}
