// Package apiregistration serves the apiregistration.k8s.io group (v1):
// apiservices and apiservices/status, with kube-aggregator's strategy and
// validation.
//
// The Local APIServices kube-apiserver lists (one per group version it
// serves) are kept by pkg/controllers/autoregister; those naming a
// service are proxied by pkg/apiserver/aggregator, their availability
// kept by pkg/controllers/availability.
package apiregistration

import (
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of apiregistration.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return apiregistrationv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the store the autoregister controller writes through.
type GroupStorage struct {
	APIServices *generic.Store
	// APIServiceStatus serves apiservices/status, which the availability
	// controller keeps.
	APIServiceStatus rest.Updater
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of its store.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	gv := apiregistrationv1.SchemeGroupVersion
	info := generic.NewGroupInfo(gv)
	store, err := apiServices.Install(gv, getter, info.VersionedResourcesStorageMap[gv.Version])
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{APIServices: store, APIServiceStatus: generic.NewStatusREST(store, apiServices.StatusStrategy)}, info, nil
}
