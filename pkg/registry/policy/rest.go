// Package policy serves the policy group (v1): poddisruptionbudgets, and
// the budgets the eviction subresource of pods honours (Budgets).
package policy

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// Budgets are the PodDisruptionBudgets the core group's pods/eviction
	// honours.
	Budgets *Budgets
}

// NewRESTStorageProvider returns the provider of the policy group.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(policyv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{Budgets: newBudgets(s[0])} }, podDisruptionBudgets)
}
