// Package policy serves the policy group (v1): poddisruptionbudgets, and
// the budgets the eviction subresource of pods honours (Budgets).
package policy

import (
	policyv1 "k8s.io/api/policy/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of the policy group.
type RESTStorageProvider struct {
	// Budgets, when set, is given the group's PodDisruptionBudgets once
	// they are built, for the pods' evictions.
	Budgets *Budgets
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return policyv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	gv := policyv1.SchemeGroupVersion
	info := generic.NewGroupInfo(gv)
	store, err := podDisruptionBudgets.Install(gv, getter, info.VersionedResourcesStorageMap[gv.Version])
	if err != nil {
		info.Destroy()
		return rest.APIGroupInfo{}, err
	}
	if p.Budgets != nil {
		p.Budgets.serve(store)
	}
	return info, nil
}
