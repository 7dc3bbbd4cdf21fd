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

// RESTStorageProvider builds the storage of apiextensions.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return apiextensionsv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group, and returns the typed handles of its
// storage beside it.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (Storage, rest.APIGroupInfo, error) {
	gv := apiextensionsv1.SchemeGroupVersion
	info := generic.NewGroupInfo(gv)
	resources := info.VersionedResourcesStorageMap[gv.Version]
	store, err := customResourceDefinitions.Install(gv, getter, resources)
	if err != nil {
		return Storage{}, rest.APIGroupInfo{}, err
	}
	return Storage{CustomResourceDefinitions: store, Status: resources[customResourceDefinitions.Name+"/status"].(rest.Updater)}, info, nil
}
