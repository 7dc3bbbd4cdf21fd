// Package apiextensions serves the apiextensions.k8s.io group (v1):
// customresourcedefinitions and their status. The rules are kube's, from
// the library they live in (k8s.io/apiextensions-apiserver's validation,
// on its internal types, converted from v1 with its generated
// conversions); the custom resources a definition declares are built by
// the customresource package and served by the CRD controller
// (pkg/controllers/crd).
//
// It sits in the registry, over generic.
package apiextensions

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Storage is what the server's wiring uses of the group: the CRD store
// and its status, for the CRD controller.
type Storage struct {
	CustomResourceDefinitions *generic.Store
	// Status updates the status of definitions (their conditions,
	// accepted names and stored versions).
	Status rest.Updater
}

// NewRESTStorageProvider returns the provider of apiextensions.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[Storage] {
	return generic.NewGroupProvider(apiextensionsv1.SchemeGroupVersion, func(s []*generic.Store) Storage {
		return Storage{CustomResourceDefinitions: s[0], Status: generic.NewStatusREST(s[0], customResourceDefinitions.StatusStrategy)}
	}, customResourceDefinitions)
}
