// Package scheduling serves the scheduling.k8s.io group (v1): priority
// classes, with kube's system classes (SystemPriorityClasses, created at
// start by cmd) and its refusal to delete them one by one.
package scheduling

import (
	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of scheduling.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return schedulingv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	info, err := generic.BuildGroup(schedulingv1.SchemeGroupVersion, getter, priorityClasses)
	if err != nil {
		return rest.APIGroupInfo{}, err
	}
	storages := info.VersionedResourcesStorageMap[schedulingv1.SchemeGroupVersion.Version]
	storages[priorityClasses.Name] = &priorityClassREST{Store: storages[priorityClasses.Name].(*generic.Store)}
	return info, nil
}
