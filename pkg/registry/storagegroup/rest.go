// Package storagegroup serves the storage.k8s.io group (v1): storage classes,
// CSI drivers, CSI nodes, CSI storage capacities, volume attachments and
// volume attributes classes, with kube's defaults, validation (the
// handwritten rules, then the declarative ones kube 1.37 enforces, in
// kube's order and words) and printers.
package storagegroup

import (
	storagev1 "k8s.io/api/storage/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of storage.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return storagev1.GroupName }

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

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(storagev1.SchemeGroupVersion, getter,
		storageClasses, volumeAttachments, volumeAttributesClasses, csiNodes, csiDrivers, csiStorageCapacities)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{StorageClasses: stores[0], VolumeAttachments: stores[1], CSIDrivers: stores[4]}, info, nil
}
