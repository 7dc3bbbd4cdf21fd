// Package discovery serves the discovery.k8s.io group (v1): endpoint
// slices.
package discovery

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of discovery.k8s.io.
type RESTStorageProvider struct {
	// EndpointSlices, when set, is filled with the EndpointSlices store:
	// core's services/proxy finds a service's endpoints there.
	EndpointSlices *generic.StoreRef
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return discoveryv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	gv := discoveryv1.SchemeGroupVersion
	info := generic.NewGroupInfo(gv)
	store, err := endpointSlices.Install(gv, getter, info.VersionedResourcesStorageMap[gv.Version])
	if err != nil {
		info.Destroy()
		return rest.APIGroupInfo{}, err
	}
	if p.EndpointSlices != nil {
		p.EndpointSlices.Store = store
	}
	return info, nil
}
