// Package apps serves the apps group (v1): deployments, replicasets,
// statefulsets, daemonsets and controllerrevisions.
package apps

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// RESTStorageProvider builds the storage of the apps group, of which the
// wiring uses nothing but its routes.
type RESTStorageProvider = generic.GroupProvider[struct{}]

// NewRESTStorageProvider returns the provider of the apps group.
func NewRESTStorageProvider() RESTStorageProvider {
	return RESTStorageProvider{
		GroupVersion: appsv1.SchemeGroupVersion,
		Resources: []generic.Resource{
			controllerRevisions,
			daemonSets,
			deployments,
			replicaSets,
			statefulSets,
		},
	}
}
