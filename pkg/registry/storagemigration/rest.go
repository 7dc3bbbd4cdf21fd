// Package storagemigration serves the storagemigration.k8s.io group (v1):
// storageversionmigrations, the requests kube-controller-manager's storage
// version migrator works through.
package storagemigration

import (
	storagemigrationv1 "k8s.io/api/storagemigration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of storagemigration.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return storagemigrationv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(storagemigrationv1.SchemeGroupVersion, getter, storageVersionMigrations)
}
