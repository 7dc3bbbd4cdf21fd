// Package storagegroup serves the storage.k8s.io group (v1): storage classes,
// CSI drivers, CSI nodes, CSI storage capacities, volume attachments and
// volume attributes classes, with kube's defaults, validation (the
// handwritten rules, then the declarative ones kube 1.37 enforces, in
// kube's order and words) and printers.
package storagegroup

import (
	storagev1 "k8s.io/api/storage/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// StorageClasses is the storage classes' store, which kube's
	// DefaultStorageClass and PersistentVolumeClaimResize admission read.
	StorageClasses *generic.Store
	// VolumeAttachments are read by the Node authorizer, CSIDrivers by
	// NodeRestriction.
	VolumeAttachments, CSIDrivers *generic.Store
}

// NewRESTStorageProvider returns the provider of storage.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(storagev1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage {
		return GroupStorage{StorageClasses: s[0], VolumeAttachments: s[1], CSIDrivers: s[4]}
	}, storageClasses, volumeAttachments, volumeAttributesClasses, csiNodes, csiDrivers, csiStorageCapacities)
}
