package app

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/miniapiserver/miniapiserver/pkg/registry/admissionregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apps"
	"github.com/miniapiserver/miniapiserver/pkg/registry/authentication"
	authorizationgroup "github.com/miniapiserver/miniapiserver/pkg/registry/authorization"
	"github.com/miniapiserver/miniapiserver/pkg/registry/autoscaling"
	"github.com/miniapiserver/miniapiserver/pkg/registry/batch"
	"github.com/miniapiserver/miniapiserver/pkg/registry/certificates"
	"github.com/miniapiserver/miniapiserver/pkg/registry/coordination"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	eventsgroup "github.com/miniapiserver/miniapiserver/pkg/registry/events"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
	"github.com/miniapiserver/miniapiserver/pkg/registry/policy"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	resourcegroup "github.com/miniapiserver/miniapiserver/pkg/registry/resource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagegroup"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagemigration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// stores is the registry of the server's built storage: every API group's
// APIGroupInfo, and the typed handles of the stores the wiring uses
// besides their routes (admission, authorization, the controllers, the
// objects written at start). It is the only way the wiring reaches a
// store: a handle is a field the compiler checks, not a name looked up
// when the server starts.
type stores struct {
	// groups are every group built, in the order discovery lists them
	// (groupOrder); --runtime-config may serve fewer.
	groups []rest.APIGroupInfo

	core                  core.LegacyRESTStorage
	admissionRegistration admissionregistration.GroupStorage
	apiextensions         apiextensions.Storage
	apiRegistration       apiregistration.GroupStorage
	certificates          certificates.GroupStorage
	coordination          coordination.GroupStorage
	discovery             endpointslice.GroupStorage
	flowControl           flowcontrol.Storage
	networking            networking.GroupStorage
	node                  node.GroupStorage
	policy                policy.GroupStorage
	rbac                  rbac.GroupStorage
	resource              resourcegroup.GroupStorage
	scheduling            scheduling.GroupStorage
	storage               storagegroup.GroupStorage
}

// destroy releases the storage of every group.
func (st *stores) destroy() { destroyGroups(st.groups) }

func destroyGroups(groups []rest.APIGroupInfo) {
	for i := range groups {
		groups[i].Destroy()
	}
}

// serviceResolver finds a service's address (webhooks', and the CRD
// conversion webhooks') from its endpoints.
func (st *stores) serviceResolver() webhookclient.EndpointsResolver {
	return webhookclient.EndpointsResolver{Services: st.core.Services, Endpoints: st.core.Endpoints}
}

// BuildAPIGroups builds every API group as the server does (buildStores,
// its one wiring) over getter's storage, in the order discovery lists
// them. The OpenAPI generator (hack/openapi-gen) documents what it
// returns, on a storage that is never used.
func BuildAPIGroups(o *Options, getter generic.RESTOptionsGetter, deps ProviderDeps) ([]rest.APIGroupInfo, error) {
	st, err := buildStores(o, getter, deps)
	if err != nil {
		return nil, err
	}
	return st.groups, nil
}

// buildStores builds the storage of every API group over getter. Each
// group is built after the groups whose stores it reads, which it is
// handed as typed handles: this function is the one place that orders
// them. A failure destroys what was built.
func buildStores(o *Options, getter generic.RESTOptionsGetter, deps ProviderDeps) (*stores, error) {
	coreProvider, err := coreStorageProvider(o, deps)
	if err != nil {
		return nil, err
	}
	authorization := cmp.Or(deps.Authorization, &Authorization{})
	st := &stores{}
	b := &groupBuilder{getter: getter}
	// First the groups the core group reads: the hooks of its new pods
	// and claims, its pods/eviction and its services/proxy (coreReads).
	addTyped(b, &st.scheduling, scheduling.NewRESTStorageProvider())
	addTyped(b, &st.node, node.NewRESTStorageProvider())
	addTyped(b, &st.storage, storagegroup.NewRESTStorageProvider())
	addTyped(b, &st.policy, policy.NewRESTStorageProvider())
	addTyped(b, &st.discovery, endpointslice.NewRESTStorageProvider())
	addTyped(b, &st.core, coreReads(o, coreProvider, st))
	// Then those that read the core group's: events.k8s.io serves its
	// events, resource.k8s.io's admin-access check reads its namespaces.
	b.add(eventsgroup.RESTStorageProvider{Events: st.core.Events})
	addTyped(b, &st.resource, resourcegroup.NewRESTStorageProvider(st.core.Namespaces))
	// And those that read no other group's stores.
	addTyped(b, &st.apiRegistration, apiregistration.NewRESTStorageProvider())
	b.add(apps.NewRESTStorageProvider())
	b.add(authentication.RESTStorageProvider{Authenticator: deps.Authenticator, APIAudiences: deps.APIAudiences})
	b.add(authorizationgroup.RESTStorageProvider{Authorizer: authorization.Authorizer, RuleResolver: authorization.RuleResolver})
	b.add(autoscaling.NewRESTStorageProvider())
	b.add(batch.NewRESTStorageProvider())
	addTyped(b, &st.certificates, certificates.NewRESTStorageProvider())
	addTyped(b, &st.networking, networking.RESTStorageProvider{NoDefaultIngressClass: deps.NoDefaultIngressClass})
	addTyped(b, &st.rbac, rbac.RESTStorageProvider{Authorizer: authorization.Authorizer, Policy: authorization.Policy})
	addTyped(b, &st.admissionRegistration, admissionregistration.NewRESTStorageProvider())
	addTyped(b, &st.apiextensions, apiextensions.NewRESTStorageProvider())
	addTyped(b, &st.coordination, coordination.NewRESTStorageProvider())
	addTyped(b, &st.flowControl, flowcontrol.NewRESTStorageProvider())
	b.add(storagemigration.NewRESTStorageProvider())
	if b.err == nil {
		st.groups, b.err = inDiscoveryOrder(b.groups)
	}
	if b.err != nil {
		destroyGroups(b.groups)
		return nil, b.err
	}
	return st, nil
}

// groupOrder is the order discovery lists the groups in: kube-apiserver's.
var groupOrder = []string{
	"", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io", "authorization.k8s.io",
	"autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io", "policy", "rbac.authorization.k8s.io",
	"storage.k8s.io", "admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
	"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io",
}

// inDiscoveryOrder is built, the groups as built, in groupOrder's order;
// an error when built is not every group groupOrder lists, once.
func inDiscoveryOrder(built []rest.APIGroupInfo) ([]rest.APIGroupInfo, error) {
	out := make([]rest.APIGroupInfo, len(groupOrder))
	for _, g := range built {
		i := slices.Index(groupOrder, g.GroupName)
		if i < 0 || out[i].PrioritizedVersions != nil {
			return nil, fmt.Errorf("the %q API group has no place of its own in the order of discovery", g.GroupName)
		}
		out[i] = g
	}
	for i, g := range out {
		if g.PrioritizedVersions == nil {
			return nil, fmt.Errorf("the %q API group is not built", groupOrder[i])
		}
	}
	return out, nil
}

// groupBuilder builds groups one after another over getter. It keeps the
// first error: the groups after a failure are not built.
type groupBuilder struct {
	getter generic.RESTOptionsGetter
	groups []rest.APIGroupInfo // in the order built
	err    error
}

// add builds p's group, of which the wiring uses nothing but its routes.
func (b *groupBuilder) add(p generic.RESTStorageProvider) {
	if b.err == nil {
		info, err := p.NewRESTStorage(b.getter)
		b.built(p.GroupName(), info, err)
	}
}

// typedProvider is a provider that hands the wiring typed handles of its
// stores (T) beside its APIGroupInfo.
type typedProvider[T any] interface {
	generic.RESTStorageProvider
	NewGroupStorage(generic.RESTOptionsGetter) (T, rest.APIGroupInfo, error)
}

// addTyped builds p's group and sets *handles to the typed handles of its
// stores.
func addTyped[T any](b *groupBuilder, handles *T, p typedProvider[T]) {
	if b.err == nil {
		h, info, err := p.NewGroupStorage(b.getter)
		if b.built(p.GroupName(), info, err) {
			*handles = h
		}
	}
}

// built records the outcome of building group.
func (b *groupBuilder) built(group string, info rest.APIGroupInfo, err error) bool {
	if err != nil {
		name := strconv.Quote(group)
		if group == "" {
			name = "core"
		}
		b.err = fmt.Errorf("building the %s API group: %w", name, err)
		return false
	}
	b.groups = append(b.groups, info)
	return true
}

// ProviderDeps are what some API groups need of the server beyond its
// options.
type ProviderDeps struct {
	// RootCA is the PEM published in every namespace (nil: none).
	RootCA []byte
	// Tokens serves the TokenRequest API (nil: not served).
	Tokens *core.TokenIssuer
	// Authenticator reviews TokenReviews; APIAudiences are its default
	// audiences.
	Authenticator authenticator.Request
	APIAudiences  []string
	// StorageHealth checks etcd for componentstatuses (nil: not listed).
	StorageHealth func(context.Context) error
	// Authorization answers the access and rules reviews, and is asked
	// whether a writer of roles may escalate or bind (nil: groups only
	// inspected, as by the OpenAPI generator).
	Authorization *Authorization
	// NoDefaultIngressClass turns off DefaultIngressClass
	// (--disable-admission-plugins), which networking.k8s.io applies.
	NoDefaultIngressClass bool
}

// coreStorageProvider is the provider of the core group, configured from o
// and deps; coreReads adds the stores of other groups it reads.
func coreStorageProvider(o *Options, deps ProviderDeps) (core.RESTStorageProvider, error) {
	serviceRanges, err := o.serviceClusterIPRanges()
	if err != nil {
		return core.RESTStorageProvider{}, err
	}
	var secondary netip.Prefix
	if len(serviceRanges) == 2 {
		secondary = serviceRanges[1]
	}
	components := core.KubeComponentChecks()
	if deps.StorageHealth != nil {
		// kube names its storage backends etcd-0, etcd-1...; this server has one.
		components["etcd-0"] = core.StorageComponentCheck(deps.StorageHealth)
	}
	return core.RESTStorageProvider{
		ServiceClusterIPRange:          serviceRanges[0],
		SecondaryServiceClusterIPRange: secondary,
		ServiceNodePortRange:           o.Kube.ServiceNodePortRange,
		EventTTL:                       o.EventTTL,
		RootCA:                         deps.RootCA,
		DefaultServiceAccounts:         o.controllerEnabled(serviceAccountControllerName),
		Tokens:                         deps.Tokens,
		Kubelet:                        o.Kubelet.config(),
		Components:                     components,
		// The mutating halves of kube's plugins of new pods, unless the
		// flags turn them off (their validating halves are steps of the
		// admission chain).
		NoPodServiceAccount: o.Admission.disabled("ServiceAccount"),
		NoPodTolerations:    o.Admission.disabled("DefaultTolerationSeconds"),
		NoPodTopologyLabels: o.Admission.disabled("PodTopologyLabels"),
		NoPodLimitRanges:    o.Admission.disabled("LimitRanger"),
		PodTolerations: &core.DefaultTolerationSeconds{
			NotReady: o.Admission.NotReadyTolerationSeconds, Unreachable: o.Admission.UnreachableTolerationSeconds},
	}, nil
}

// coreReads is p reading the stores of the groups built before the core
// group (st): kube's Priority, RuntimeClass and DefaultStorageClass
// admission of new pods and claims, unless the flags turn them off; the
// disruption budgets pods/eviction honours; the EndpointSlices
// services/proxy finds a service's endpoints in.
func coreReads(o *Options, p core.RESTStorageProvider, st *stores) core.RESTStorageProvider {
	if !o.Admission.disabled("Priority") {
		p.PodPriority = scheduling.PodPriority{Classes: st.scheduling.PriorityClasses}
	}
	if !o.Admission.disabled("RuntimeClass") {
		p.PodRuntimeClass = node.PodRuntimeClass{Classes: st.node.RuntimeClasses}
	}
	if !o.Admission.disabled("DefaultStorageClass") {
		p.ClaimStorageClass = storagegroup.ClaimDefaulter{Classes: st.storage.StorageClasses}
	}
	p.DisruptionBudgets = st.policy.Budgets
	p.EndpointSlices = st.discovery.EndpointSlices
	return p
}
