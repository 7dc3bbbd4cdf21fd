// Package storage serves the storage.k8s.io group (v1): storage classes,
// CSI drivers, CSI nodes, CSI storage capacities, volume attachments and
// volume attributes classes, with kube's defaults, validation (the
// handwritten rules, then the declarative ones kube 1.37 enforces, in
// kube's order and words) and printers.
package storage

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

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(storagev1.SchemeGroupVersion, getter,
		storageClasses, volumeAttachments, volumeAttributesClasses, csiNodes, csiDrivers, csiStorageCapacities)
}
