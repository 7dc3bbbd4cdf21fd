package generic

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// GroupProvider is the RESTStorageProvider of a group built wholly from
// its resources' declarations (BuildGroupStores), so that a group states
// only what is its own: its version, its resources and the typed handles
// (T) the server's wiring keeps of their stores.
type GroupProvider[T any] struct {
	// GroupVersion is the version the resources are stored and preferred at.
	GroupVersion schema.GroupVersion
	// Resources are the group's resources, in the order discovery lists them.
	Resources []Resource
	// Handles picks T from the built stores, given in Resources' order
	// (nil: the zero T, for a group the wiring reaches only by its routes).
	Handles func(stores []*Store) T
}

var _ RESTStorageProvider = GroupProvider[struct{}]{}

// NewGroupProvider is the GroupProvider of gv serving resources, in the
// order discovery lists them, with handles picking T from their stores
// (nil: the zero T). It keeps a group's rest.go to its handles and one
// statement.
func NewGroupProvider[T any](gv schema.GroupVersion, handles func(stores []*Store) T, resources ...Resource) GroupProvider[T] {
	return GroupProvider[T]{GroupVersion: gv, Resources: resources, Handles: handles}
}

// GroupName implements RESTStorageProvider.
func (p GroupProvider[T]) GroupName() string { return p.GroupVersion.Group }

// NewRESTStorage implements RESTStorageProvider.
func (p GroupProvider[T]) NewRESTStorage(getter RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides. A
// failure leaves nothing built.
func (p GroupProvider[T]) NewGroupStorage(getter RESTOptionsGetter) (T, rest.APIGroupInfo, error) {
	var handles T
	info, stores, err := BuildGroupStores(p.GroupVersion, getter, p.Resources...)
	if err != nil {
		return handles, rest.APIGroupInfo{}, err
	}
	if p.Handles != nil {
		handles = p.Handles(stores)
	}
	return handles, info, nil
}
