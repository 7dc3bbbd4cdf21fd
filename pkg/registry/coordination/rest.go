// Package coordination serves the coordination.k8s.io group (v1): leases.
package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of coordination.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return coordinationv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(coordinationv1.SchemeGroupVersion, getter, leases)
}
