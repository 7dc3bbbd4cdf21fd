// Package autoscaling serves the autoscaling group: horizontalpodautoscalers,
// stored at v2 (the preferred version) and served at v1 too, as a view of
// the one store that converts at its boundary.
package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of autoscaling.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return autoscalingv2.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(autoscalingv2.SchemeGroupVersion, getter, horizontalPodAutoscalers)
}
