// Package apps serves the apps group (v1): deployments, replicasets,
// statefulsets, daemonsets and controllerrevisions.
package apps

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// NewRESTStorageProvider returns the provider of the apps group, of which the
// wiring uses nothing but its routes.
func NewRESTStorageProvider() generic.GroupProvider[struct{}] {
	return generic.NewGroupProvider[struct{}](appsv1.SchemeGroupVersion, nil, controllerRevisions, daemonSets, deployments, replicaSets, statefulSets)
}
