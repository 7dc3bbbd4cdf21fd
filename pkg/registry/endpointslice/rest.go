// Package endpointslice serves the discovery.k8s.io group (v1): endpoint
// slices.
package endpointslice

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of discovery.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return discoveryv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// EndpointSlices is the EndpointSlices' store: core's services/proxy,
	// the aggregator and the endpoint reconciler read or keep them.
	EndpointSlices *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(discoveryv1.SchemeGroupVersion, getter, endpointSlices)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{EndpointSlices: stores[0]}, info, nil
}
