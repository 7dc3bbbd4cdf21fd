// Package autoscaling serves the autoscaling group: horizontalpodautoscalers,
// stored at v2 (the preferred version) and served at v1 too, as a view of
// the one store that converts at its boundary.
package autoscaling

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// NewRESTStorageProvider returns the provider of autoscaling, of which the
// wiring uses nothing but its routes.
func NewRESTStorageProvider() generic.GroupProvider[struct{}] {
	return generic.NewGroupProvider[struct{}](autoscalingv2.SchemeGroupVersion, nil, horizontalPodAutoscalers)
}
