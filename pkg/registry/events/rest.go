// Package events serves events.k8s.io (v1): the core group's events, the
// same objects in the same store, through a view of core's events store
// that converts at its boundary (as kube stores both as core v1 Events).
package events

import (
	"errors"

	eventsv1 "k8s.io/api/events/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of events.k8s.io.
type RESTStorageProvider struct {
	// Events is the core group's events store (core.LegacyRESTStorage's):
	// the core group is built first.
	Events *generic.Store
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return eventsv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	if p.Events == nil {
		return rest.APIGroupInfo{}, errors.New("events.k8s.io: the core group's events store is not built")
	}
	resources := map[string]rest.Storage{}
	if err := generic.InstallVersion(resources, "events", p.Events, nil, eventsV1); err != nil {
		return rest.APIGroupInfo{}, err
	}
	v := eventsv1.SchemeGroupVersion.Version
	return rest.APIGroupInfo{
		GroupName:                    eventsv1.GroupName,
		PrioritizedVersions:          []string{v},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{v: resources},
	}, nil
}
