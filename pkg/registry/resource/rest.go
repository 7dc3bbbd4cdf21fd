// Package resource serves the resource.k8s.io group (v1): Dynamic Resource
// Allocation's deviceclasses, resourceclaims (+status),
// resourceclaimtemplates, resourceslices and devicetaintrules (+status),
// as kube-apiserver 1.37 serves them by default (its beta and alpha
// versions, and resourcepoolstatusrequests, are off by default there).
//
// Validation returns what kube's does, in its order: the handwritten
// checks first, then those kube has moved to declarative validation
// (declarativeLast).
package resource

import (
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of resource.k8s.io.
type RESTStorageProvider struct {
	// Namespaces are the core group's, read by the admin-access check of
	// claims and claim templates (a claim asking for admin access to
	// devices needs its namespace labelled
	// resource.kubernetes.io/admin-access=true): the core group is built
	// first.
	Namespaces rest.Getter
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return resourcev1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// ResourceSlices are read by the Node authorizer.
	ResourceSlices *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
// Discovery lists the resources in this order, as kube's does.
func (p RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	admin := adminAccess{namespaces: p.Namespaces}
	info, stores, err := generic.BuildGroupStores(resourcev1.SchemeGroupVersion, getter,
		deviceClasses,
		deviceTaintRules,
		newResourceClaims(admin),
		newResourceClaimTemplates(admin),
		resourceSlices,
	)
	if err != nil {
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	return GroupStorage{ResourceSlices: stores[4]}, info, nil
}
