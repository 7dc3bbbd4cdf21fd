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

// NamespaceRef hands the core group's namespaces to this group, once the
// core group is built: a claim asking for admin access to devices needs
// its namespace labelled resource.kubernetes.io/admin-access=true.
type NamespaceRef struct {
	Getter rest.Getter
}

// RESTStorageProvider builds the storage of resource.k8s.io.
type RESTStorageProvider struct {
	// Namespaces are read by the admin-access check of claims and claim
	// templates.
	Namespaces *NamespaceRef
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return resourcev1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider; discovery lists
// the resources in this order, as kube's does.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	admin := adminAccess{namespaces: p.Namespaces}
	return generic.BuildGroup(resourcev1.SchemeGroupVersion, getter,
		deviceClasses,
		deviceTaintRules,
		newResourceClaims(admin),
		newResourceClaimTemplates(admin),
		resourceSlices,
	)
}
