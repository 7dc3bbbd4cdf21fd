// Package networking serves the networking.k8s.io group (v1): ingresses,
// ingress classes, network policies, IP addresses and service CIDRs. The
// IP addresses are those the services' allocator
// (core/service/ipallocator) writes, at the same keys; the service CIDRs
// are the ranges it allocates from.
package networking

import (
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of networking.k8s.io.
type RESTStorageProvider struct {
	// NoDefaultIngressClass turns off kube's DefaultIngressClass
	// admission plugin: new ingresses are stored without a class.
	NoDefaultIngressClass bool
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return networkingv1.GroupName }

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the server keeps the default ServiceCIDR through these.
type GroupStorage struct {
	ServiceCIDRs      *generic.Store
	ServiceCIDRStatus rest.Updater
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes
// are mounted from, and the typed handles of what the wiring uses besides.
func (p RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (GroupStorage, rest.APIGroupInfo, error) {
	gv := networkingv1.SchemeGroupVersion
	info := generic.NewGroupInfo(gv)
	install := func(r generic.Resource) (*generic.Store, error) {
		return r.Install(gv, getter, info.VersionedResourcesStorageMap[gv.Version])
	}
	fail := func(err error) (GroupStorage, rest.APIGroupInfo, error) {
		info.Destroy()
		return GroupStorage{}, rest.APIGroupInfo{}, err
	}
	// New ingresses get the default class (kube's DefaultIngressClass
	// admission).
	classes, err := install(ingressClasses)
	if err != nil {
		return fail(err)
	}
	var defaultClasses rest.Lister = classes
	if p.NoDefaultIngressClass {
		defaultClasses = nil
	}
	for _, r := range []generic.Resource{newIngresses(defaultClasses), ipAddresses, networkPolicies} {
		if _, err := install(r); err != nil {
			return fail(err)
		}
	}
	cidrs, err := install(serviceCIDRs)
	if err != nil {
		return fail(err)
	}
	return GroupStorage{ServiceCIDRs: cidrs, ServiceCIDRStatus: generic.NewStatusREST(cidrs, serviceCIDRs.StatusStrategy)}, info, nil
}
