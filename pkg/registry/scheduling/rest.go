// Package scheduling serves the scheduling.k8s.io group (v1): priority
// classes, with kube's system classes (SystemPriorityClasses, created at
// start by cmd) and its refusal to delete them one by one.
package scheduling

import (
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of scheduling.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return schedulingv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// PriorityClasses is the priority classes' store: kube's Priority
	// admission reads it, and the server creates kube's system classes
	// through it.
	PriorityClasses *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	gv := schedulingv1.SchemeGroupVersion
	info, stores, err := generic.BuildGroupStores(gv, getter, priorityClasses)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{PriorityClasses: stores[0]}, info, nil
}
