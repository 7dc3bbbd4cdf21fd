// Package policy serves the policy group (v1): poddisruptionbudgets, and
// the budgets the eviction subresource of pods honours (Budgets).
package policy

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of the policy group.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return policyv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// Budgets are the PodDisruptionBudgets the core group's pods/eviction
	// honours.
	Budgets *Budgets
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(policyv1.SchemeGroupVersion, getter, podDisruptionBudgets)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{Budgets: newBudgets(stores[0])}, info, nil
}
