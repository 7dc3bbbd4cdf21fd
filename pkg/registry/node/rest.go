// Package node serves the node.k8s.io group (v1): runtime classes.
package node

import (
	nodev1 "k8s.io/api/node/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of node.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return nodev1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// RuntimeClasses is the runtime classes' store, which kube's
	// RuntimeClass admission reads.
	RuntimeClasses *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	info, stores, err := generic.BuildGroupStores(nodev1.SchemeGroupVersion, getter, runtimeClasses)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{RuntimeClasses: stores[0]}, info, nil
}
