package app

import (
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
	storagegroup "github.com/miniapiserver/miniapiserver/pkg/registry/storage"
)

// groupStorages are the typed handles of the groups' storage that the
// server's wiring uses besides their routes: admission, the objects
// created at start, the namespace controller.
type groupStorages struct {
	core       core.LegacyRESTStorage
	scheduling scheduling.GroupStorage
	node       node.GroupStorage
	storage    storagegroup.GroupStorage
	// flowControl's objects are kept as kube keeps them by a controller.
	flowControl flowcontrol.Storage
	// apiextensions' definitions are served by the CRD controller.
	apiextensions apiextensions.Storage
	// networking's default ServiceCIDR too.
	networking networking.GroupStorage
	// apiRegistration's APIServices are kept by the autoregister
	// controller.
	apiRegistration apiregistration.GroupStorage
	// rbac's stores take the bootstrap policy and feed the policy cache.
	rbac rbac.GroupStorage
}

// build builds the group of p, a named group's provider, keeping its
// typed handles when the wiring uses some.
func (st *groupStorages) build(p generic.RESTStorageProvider, getter generic.RESTOptionsGetter) (info rest.APIGroupInfo, err error) {
	switch p := p.(type) {
	case scheduling.RESTStorageProvider:
		st.scheduling, info, err = p.NewGroupStorage(getter)
	case node.RESTStorageProvider:
		st.node, info, err = p.NewGroupStorage(getter)
	case storagegroup.RESTStorageProvider:
		st.storage, info, err = p.NewGroupStorage(getter)
	case flowcontrol.RESTStorageProvider:
		st.flowControl, info, err = p.NewFlowControlStorage(getter)
	case apiextensions.RESTStorageProvider:
		st.apiextensions, info, err = p.NewGroupStorage(getter)
	case networking.RESTStorageProvider:
		st.networking, info, err = p.NewGroupStorage(getter)
	case apiregistration.RESTStorageProvider:
		st.apiRegistration, info, err = p.NewGroupStorage(getter)
	case rbac.RESTStorageProvider:
		st.rbac, info, err = p.NewGroupStorage(getter)
	default:
		info, err = p.NewRESTStorage(getter)
	}
	return info, err
}

// readByCore reports whether p's group is one whose stores the core
// group's hooks read (through the typed handles build keeps): it is built
// before the core group.
func readByCore(p generic.RESTStorageProvider) bool {
	switch p.(type) {
	case scheduling.RESTStorageProvider, node.RESTStorageProvider, storagegroup.RESTStorageProvider:
		return true
	}
	return false
}
