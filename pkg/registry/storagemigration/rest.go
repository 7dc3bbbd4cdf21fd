// Package storagemigration serves the storagemigration.k8s.io group (v1):
// storageversionmigrations, the requests kube-controller-manager's storage
// version migrator works through.
package storagemigration

import (
	storagemigrationv1 "k8s.io/api/storagemigration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// NewRESTStorageProvider returns the provider of storagemigration.k8s.io,
// of which the wiring uses nothing but its routes.
func NewRESTStorageProvider() generic.GroupProvider[struct{}] {
	return generic.NewGroupProvider[struct{}](storagemigrationv1.SchemeGroupVersion, nil, storageVersionMigrations)
}
