// Package core serves the core API group ("", version v1): its
// RESTStorageProvider, and the strategies, defaults, validation and table
// columns of each of its resources, one file per resource.
package core

import (
	"net/netip"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// SchemeGroupVersion is the group version this package serves.
var SchemeGroupVersion = schema.GroupVersion{Version: "v1"}

// RESTStorageProvider builds the storage of the core group. The zero value
// has kube-apiserver's defaults.
type RESTStorageProvider struct {
	// ServiceClusterIPRange is the CIDR services' cluster IPs come from
	// (zero: DefaultServiceClusterIPRange).
	ServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is the range of node ports (zero:
	// DefaultServiceNodePortRange).
	ServiceNodePortRange utilnet.PortRange
	// EventTTL is how long events are kept (zero: DefaultEventTTL).
	EventTTL time.Duration
	// RootCA, when set, is the PEM published in every namespace as the
	// ConfigMap kube-root-ca.crt.
	RootCA []byte
	// Admission, when set, is what admission plugins built on other
	// groups' objects do to new pods and claims.
	Admission CrossGroupAdmission
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return "" }

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	p = p.withDefaults()
	resources := map[string]rest.Storage{}
	info := rest.APIGroupInfo{
		GroupName:                    "",
		PrioritizedVersions:          []string{SchemeGroupVersion.Version},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{SchemeGroupVersion.Version: resources},
	}
	fail := func(err error) (rest.APIGroupInfo, error) {
		info.Destroy()
		return rest.APIGroupInfo{}, err
	}
	for _, r := range []generic.Resource{
		configMaps,
		secrets,
		endpoints,
		nodes,
		newEvents(p.EventTTL),
		serviceAccounts,
		persistentVolumes,
		limitRanges,
		resourceQuotas,
		podTemplates,
		replicationControllers,
	} {
		if _, err := r.Install(SchemeGroupVersion, getter, resources); err != nil {
			return fail(err)
		}
	}
	if err := installServices(getter, p.ServiceClusterIPRange, p.ServiceNodePortRange, resources); err != nil {
		return fail(err)
	}
	claims, err := persistentVolumeClaims.Install(SchemeGroupVersion, getter, resources)
	if err != nil {
		return fail(err)
	}
	claims.BeginCreate = claimDefaultClass(p.Admission)
	// Created as kube's controller manager creates them.
	defaults := namespaceDefaults{
		serviceAccounts: fieldmanager.TrackingCreater(resources["serviceaccounts"].(rest.Creater),
			SchemeGroupVersion.WithKind("ServiceAccount"), kubeControllerManager),
		configMaps: fieldmanager.TrackingCreater(resources["configmaps"].(rest.Creater),
			SchemeGroupVersion.WithKind("ConfigMap"), kubeControllerManager),
		rootCA: p.RootCA,
	}
	if err := installNamespaces(getter, defaults, resources); err != nil {
		return fail(err)
	}
	// Pods consult service accounts when the group serves them, whatever
	// the order resources are installed in: resources is complete before
	// the first request.
	lookups := &podLookups{
		serviceAccounts: func() rest.Getter {
			sa, _ := resources["serviceaccounts"].(rest.Getter)
			return sa
		},
		limitRanges: func() rest.Lister {
			lr, _ := resources["limitranges"].(rest.Lister)
			return lr
		},
		admission: p.Admission,
	}
	if err := installPods(getter, resources, lookups); err != nil {
		return fail(err)
	}
	return info, nil
}

func (p RESTStorageProvider) withDefaults() RESTStorageProvider {
	if !p.ServiceClusterIPRange.IsValid() {
		p.ServiceClusterIPRange = DefaultServiceClusterIPRange
	}
	if p.ServiceNodePortRange.Size == 0 {
		p.ServiceNodePortRange = DefaultServiceNodePortRange
	}
	if p.EventTTL <= 0 {
		p.EventTTL = DefaultEventTTL
	}
	return p
}
