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

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// ResourceSlices are read by the Node authorizer.
	ResourceSlices *generic.Store
}

// NewRESTStorageProvider returns the provider of resource.k8s.io.
// namespaces are the core group's, read by the admin-access check of
// claims and claim templates (a claim asking for admin access to devices
// needs its namespace labelled resource.kubernetes.io/admin-access=true):
// the core group is built first. Discovery lists the resources in this
// order, as kube's does.
func NewRESTStorageProvider(namespaces rest.Getter) generic.GroupProvider[GroupStorage] {
	admin := adminAccess{namespaces: namespaces}
	return generic.NewGroupProvider(resourcev1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{ResourceSlices: s[4]} },
		deviceClasses, deviceTaintRules, newResourceClaims(admin), newResourceClaimTemplates(admin), resourceSlices)
}
