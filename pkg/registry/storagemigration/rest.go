// Package storagemigration serves the storagemigration.k8s.io group (v1):
// storageversionmigrations, the requests kube-controller-manager's storage
// version migrator works through.
package storagemigration

import (
	storagemigrationv1 "k8s.io/api/storagemigration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// RESTStorageProvider builds the storage of storagemigration.k8s.io, of
// which the wiring uses nothing but its routes.
type RESTStorageProvider = generic.GroupProvider[struct{}]

// NewRESTStorageProvider returns the provider of storagemigration.k8s.io.
func NewRESTStorageProvider() RESTStorageProvider {
	return RESTStorageProvider{
		GroupVersion: storagemigrationv1.SchemeGroupVersion,
		Resources:    []generic.Resource{storageVersionMigrations},
	}
}
