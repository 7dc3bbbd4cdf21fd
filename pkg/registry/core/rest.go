// Package core serves the core API group ("", version v1): its
// RESTStorageProvider, and the declaration, strategies, validation and
// table columns of each of its resources, one file per resource. What
// other groups share lives in subpackages: the PodSpec library (podspec),
// core's common checks (validation), and the services' allocators
// (service/ipallocator, service/portallocator).
package core

import (
	"cmp"
	"maps"
	"net/netip"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/kubelet"
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
	// (zero: DefaultServiceClusterIPRange), and its family the cluster's
	// primary one.
	ServiceClusterIPRange netip.Prefix
	// SecondaryServiceClusterIPRange, a CIDR of the other family, makes
	// the cluster dual-stack (kube's second --service-cluster-ip-range):
	// services that ask for it get an address of each family.
	SecondaryServiceClusterIPRange netip.Prefix
	// ServiceNodePortRange is the range of node ports (zero:
	// DefaultServiceNodePortRange).
	ServiceNodePortRange utilnet.PortRange
	// EventTTL is how long events are kept (zero: DefaultEventTTL).
	EventTTL time.Duration
	// RootCA, when set, is the PEM published in every namespace as the
	// ConfigMap kube-root-ca.crt (kube-controller-manager's
	// root-ca-cert-publisher does it in kube).
	RootCA []byte
	// DefaultServiceAccounts creates the ServiceAccount "default" in every
	// new namespace, as kube-controller-manager's serviceaccount
	// controller does (false: none, as kube-apiserver alone).
	DefaultServiceAccounts bool
	// Tokens, when set, serves the TokenRequest API
	// (serviceaccounts/token).
	Tokens *TokenIssuer
	// PodPriority, PodRuntimeClass and ClaimStorageClass, when set, are
	// kube's Priority, RuntimeClass and DefaultStorageClass admission
	// plugins: what new pods and claims get from the objects of
	// scheduling.k8s.io, node.k8s.io and storage.k8s.io, over those
	// groups' stores (cmd builds them first).
	PodPriority       PodAdmitter
	PodRuntimeClass   PodAdmitter
	ClaimStorageClass ClaimAdmitter
	// NoPodServiceAccount turns off the mutating half of kube's
	// ServiceAccount admission plugin (PodServiceAccount), which new pods
	// otherwise go through (--disable-admission-plugins=ServiceAccount).
	NoPodServiceAccount bool
	// PodTolerations are the tolerations new and updated pods get (kube's
	// DefaultTolerationSeconds; nil: KubeDefaultTolerationSeconds), unless
	// NoPodTolerations turns the plugin off.
	PodTolerations   *DefaultTolerationSeconds
	NoPodTolerations bool
	// NoPodLimitRanges turns off the mutating half of kube's LimitRanger
	// (the default resources of new pods).
	NoPodLimitRanges bool
	// NoPodTopologyLabels turns off kube's PodTopologyLabels: pods bound
	// to a node get its zone and region labels.
	NoPodTopologyLabels bool
	// DisruptionBudgets are the budgets pods/eviction honours (nil:
	// evictions of running pods fail, as no budget can be read).
	DisruptionBudgets DisruptionBudgets
	// Kubelet is how pods/log, exec, attach, portforward and nodes/proxy
	// reach kubelets.
	Kubelet kubelet.Config
	// EndpointSlices is the store of discovery.k8s.io's EndpointSlices,
	// where services/proxy finds a service's endpoints (nil: none).
	EndpointSlices rest.Lister
	// Components are what componentstatuses reports, by name (nil:
	// KubeComponentChecks, without the storage).
	Components map[string]ComponentCheck
}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return "" }

// LegacyRESTStorage is what the server's wiring uses of the core group
// besides its routes (kube's LegacyRESTStorage): typed handles, so that
// the compiler checks that wiring.
type LegacyRESTStorage struct {
	// Namespaces serves namespaces: admission reads them, the server
	// creates the system namespaces through it, the namespace controller
	// finishes their deletion.
	Namespaces *NamespaceREST
	// NamespaceFinalize serves namespaces/finalize (the namespace
	// controller's last step).
	NamespaceFinalize rest.Updater
	// NamespaceStatus serves namespaces/status, where the namespace
	// controller writes a deletion's conditions.
	NamespaceStatus rest.Updater
	// Services is the services' store: the server creates the kubernetes
	// service through it.
	Services *generic.Store
	// ServiceRepair repairs the services' allocators; the server runs it.
	ServiceRepair *ServiceRepair
	// LimitRanges is the LimitRanges' store, which admission reads.
	LimitRanges *generic.Store
	// ConfigMaps is the ConfigMaps' store: the server publishes how it
	// authenticates clients in one (extension-apiserver-authentication).
	ConfigMaps *generic.Store
	// ServiceAccounts, Pods, Secrets and Nodes are read by the
	// authenticator of service account tokens: the account and the object
	// a token is bound to must still exist.
	ServiceAccounts, Pods, Secrets, Nodes *generic.Store
	// Events is the events' store, which events.k8s.io serves too.
	Events *generic.Store
	// Endpoints is the endpoints' store: the endpoint reconciler keeps the
	// kubernetes service's, webhooks and the aggregator find services'.
	Endpoints *generic.Store
	// PersistentVolumeClaims and PersistentVolumes are read by the Node
	// authorizer and NodeRestriction (the volumes of a node's pods).
	PersistentVolumeClaims, PersistentVolumes *generic.Store
	// ResourceQuotas and ResourceQuotaStatus are what kube's ResourceQuota
	// admission reads and charges.
	ResourceQuotas      *generic.Store
	ResourceQuotaStatus rest.Updater
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the core group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (p RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (LegacyRESTStorage, rest.APIGroupInfo, error) {
	p = p.withDefaults()
	info := generic.NewGroupInfo(SchemeGroupVersion)
	resources := info.VersionedResourcesStorageMap[SchemeGroupVersion.Version]
	fail := func(err error) (LegacyRESTStorage, rest.APIGroupInfo, error) {
		info.Destroy()
		return LegacyRESTStorage{}, rest.APIGroupInfo{}, err
	}
	install := func(r generic.Resource) (*generic.Store, error) {
		return r.Install(SchemeGroupVersion, getter, resources)
	}
	var legacy LegacyRESTStorage
	connect := newProxies(p.Kubelet)
	for _, r := range []struct {
		resource generic.Resource
		handle   **generic.Store // nil: the wiring uses none
	}{
		{endpoints, &legacy.Endpoints},
		{persistentVolumes, &legacy.PersistentVolumes},
		{newPersistentVolumeClaims(p.ClaimStorageClass), &legacy.PersistentVolumeClaims},
		{resourceQuotas, &legacy.ResourceQuotas},
		{podTemplates, nil},
		{replicationControllers, nil},
		{newEvents(p.EventTTL), &legacy.Events},
		// Service account tokens may be bound to these.
		{secrets, &legacy.Secrets},
		{withSubresources(nodes, connect.nodes()), &legacy.Nodes},
		// New namespaces and new pods use these.
		{configMaps, &legacy.ConfigMaps},
		{serviceAccounts, &legacy.ServiceAccounts},
		{limitRanges, &legacy.LimitRanges},
	} {
		store, err := install(r.resource)
		if err != nil {
			return fail(err)
		}
		if r.handle != nil {
			*r.handle = store
		}
	}
	legacy.ResourceQuotaStatus = generic.NewStatusREST(legacy.ResourceQuotas, resourceQuotas.StatusStrategy)
	ns := newNamespaces(p.namespaceDefaults(&legacy))
	_, err := install(ns.Resource)
	if err != nil {
		return fail(err)
	}
	legacy.Namespaces, legacy.NamespaceFinalize = ns.served, ns.finalize
	legacy.NamespaceStatus = generic.NewStatusREST(ns.served.Store, namespaces.StatusStrategy)
	if legacy.Pods, err = install(withSubresources(newPods(p.podLookups(&legacy)), connect.pods())); err != nil {
		return fail(err)
	}
	// After pods: services/proxy reaches the services' pods.
	al, releaseAllocators, err := newServiceAllocators(getter, p.serviceRanges(), p.ServiceNodePortRange)
	if err != nil {
		return fail(err)
	}
	family := discoveryv1.AddressTypeIPv4
	if p.ServiceClusterIPRange.Addr().Is6() {
		family = discoveryv1.AddressTypeIPv6
	}
	services := withSubresources(newServices(al, releaseAllocators), connect.services(legacy.Pods, p.EndpointSlices, family))
	if legacy.Services, err = install(services); err != nil {
		return fail(err)
	}
	legacy.ServiceRepair = newServiceRepair(al, legacy.Services)
	if p.Tokens != nil {
		resources["serviceaccounts/token"] = &TokenREST{issuer: *p.Tokens, objects: tokenObjects{
			serviceAccounts: legacy.ServiceAccounts, pods: legacy.Pods, secrets: legacy.Secrets, nodes: legacy.Nodes,
		}}
	}
	resources["componentstatuses"] = NewComponentStatusREST(p.Components)
	return legacy, info, nil
}

// namespaceDefaults is what a new namespace gets, created as kube's
// controller manager creates it.
func (p RESTStorageProvider) namespaceDefaults(legacy *LegacyRESTStorage) namespaceDefaults {
	defaults := namespaceDefaults{
		configMaps: fieldmanager.TrackingCreater(legacy.ConfigMaps, SchemeGroupVersion.WithKind("ConfigMap"), kubeControllerManager),
		rootCA:     p.RootCA,
	}
	if p.DefaultServiceAccounts {
		defaults.serviceAccounts = fieldmanager.TrackingCreater(legacy.ServiceAccounts, SchemeGroupVersion.WithKind("ServiceAccount"), kubeControllerManager)
	}
	return defaults
}

// podLookups is what pods read from the stores built before them, less
// what the provider turns off.
func (p RESTStorageProvider) podLookups(legacy *LegacyRESTStorage) podLookups {
	lookups := podLookups{limitRanges: legacy.LimitRanges, priority: p.PodPriority, runtimeClass: p.PodRuntimeClass,
		budgets: p.DisruptionBudgets}
	if p.NoPodLimitRanges {
		lookups.limitRanges = nil
	}
	if !p.NoPodTopologyLabels {
		lookups.topology = &PodTopologyLabels{Nodes: legacy.Nodes}
	}
	if !p.NoPodTolerations {
		lookups.tolerations = cmp.Or(p.PodTolerations, &KubeDefaultTolerationSeconds)
	}
	if !p.NoPodServiceAccount {
		lookups.serviceAccount = PodServiceAccount{ServiceAccounts: legacy.ServiceAccounts, Namespaces: legacy.Namespaces}
	}
	return lookups
}

// withSubresources returns r declaring subresources besides its own. A
// path r declares already is a mistake in this package's declarations,
// which every build of the group meets: it panics.
func withSubresources(r generic.Resource, subresources map[string]generic.SubresourceFunc) generic.Resource {
	all := maps.Clone(r.Subresources)
	if all == nil {
		all = map[string]generic.SubresourceFunc{}
	}
	for path, build := range subresources {
		if _, dup := all[path]; dup {
			panic("core: " + path + " is declared twice")
		}
		all[path] = build
	}
	r.Subresources = all
	return r
}

// serviceRanges are the service CIDRs, primary first.
func (p RESTStorageProvider) serviceRanges() []netip.Prefix {
	if p.SecondaryServiceClusterIPRange.IsValid() {
		return []netip.Prefix{p.ServiceClusterIPRange, p.SecondaryServiceClusterIPRange}
	}
	return []netip.Prefix{p.ServiceClusterIPRange}
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
	if p.Components == nil {
		p.Components = KubeComponentChecks()
	}
	return p
}
