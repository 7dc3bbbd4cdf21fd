// Package apps serves the apps group (v1): deployments, replicasets,
// statefulsets, daemonsets and controllerrevisions.
package apps

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of the apps group.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return appsv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(appsv1.SchemeGroupVersion, getter,
		controllerRevisions,
		daemonSets,
		deployments,
		replicaSets,
		statefulSets,
	)
}
