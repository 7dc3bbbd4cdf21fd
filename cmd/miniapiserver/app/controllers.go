package app

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/autoregister"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/garbagecollector"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	flowcontrolregistry "github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// namespaceController builds the namespace controller over namespaces,
// their finalize subresource and the served groups: it deletes every
// namespaced resource that can be listed and deleted as a collection.
func namespaceController(groups []rest.APIGroupInfo, namespaces namespace.Namespaces, finalizer rest.Updater, crds *crd.Controller) *namespace.Controller {
	var resources []namespace.Resource
	for _, g := range groups {
		for _, version := range g.PrioritizedVersions[:1] {
			storages := g.VersionedResourcesStorageMap[version]
			for name, st := range storages {
				scoper, scoped := st.(rest.Scoper)
				deleter, deletes := st.(rest.CollectionDeleter)
				lister, lists := st.(rest.Lister)
				if strings.Contains(name, "/") || !scoped || !scoper.NamespaceScoped() || !deletes || !lists {
					continue
				}
				qualified := name
				if g.GroupName != "" {
					qualified += "." + g.GroupName
				}
				resources = append(resources, namespace.Resource{Name: qualified, Deleter: deleter, Lister: lister})
			}
		}
	}
	sort.Slice(resources, func(i, j int) bool { return resources[i].Name < resources[j].Name })
	return namespace.New(namespaces, finalizer, resources, func() []namespace.Resource {
		// The custom resources served for now: kube's namespace controller
		// finds them in discovery.
		var out []namespace.Resource
		for _, served := range crds.Served() {
			if served.Store.NamespaceScoped() {
				name := served.Resource() + "." + served.Group.GroupName
				out = append(out, namespace.Resource{Name: name, Deleter: served.Store, Lister: served.Store})
			}
		}
		return out
	})
}

// garbageCollector builds the ownerReference garbage collector over
// every resource of the served groups that can be listed, watched,
// updated and deleted (but events, which kube's collector ignores too),
// and the custom resources served for now.
func garbageCollector(groups []rest.APIGroupInfo, crds *crd.Controller) *garbagecollector.Controller {
	var resources []garbagecollector.Resource
	for _, g := range groups {
		version := g.PrioritizedVersions[0]
		for name, st := range g.VersionedResourcesStorageMap[version] {
			store, ok := st.(garbagecollector.Storage)
			scoper, scoped := st.(rest.Scoper)
			if strings.Contains(name, "/") || name == "events" || !ok || !scoped {
				continue
			}
			kind, ok := storageKind(st, g.GroupName)
			if !ok {
				continue
			}
			qualified := name
			if g.GroupName != "" {
				qualified += "." + g.GroupName
			}
			resources = append(resources, garbagecollector.Resource{Name: qualified, Kind: kind, Namespaced: scoper.NamespaceScoped(), Store: store})
		}
	}
	return garbagecollector.New(resources, func() []garbagecollector.Resource {
		var out []garbagecollector.Resource
		for _, served := range crds.Served() {
			out = append(out, garbagecollector.Resource{
				Name: served.Resource() + "." + served.Group.GroupName, Kind: schema.GroupKind{Group: served.Group.GroupName, Kind: served.Kind()},
				Namespaced: served.Store.NamespaceScoped(), Store: served.Store,
			})
		}
		return out
	})
}

// storageKind is the group and kind of the objects a storage of group
// serves, as owner references name them.
func storageKind(st rest.Storage, group string) (schema.GroupKind, bool) {
	kinds, _, err := api.Scheme.ObjectKinds(st.New())
	if err != nil {
		return schema.GroupKind{}, false
	}
	for _, k := range kinds {
		if k.Group == group {
			return k.GroupKind(), true
		}
	}
	return schema.GroupKind{}, false
}

// flowControlController builds the controller that keeps kube's flow
// control configuration, over the flowcontrol.apiserver.k8s.io storages.
func flowControlController(s flowcontrolregistry.Storage) *flowcontrol.Controller {
	return flowcontrol.New(flowcontrol.Config{FlowSchemas: s.FlowSchemas, FlowSchemaStatus: s.FlowSchemaStatus, PriorityLevels: s.PriorityLevels})
}

// priorityAndFairness is API Priority and Fairness over the stored
// configuration, sharing both in-flight limits as its seats (nil when
// --enable-priority-and-fairness=false).
func priorityAndFairness(o *Options, s flowcontrolregistry.Storage) *apf.Controller {
	if !o.Auth.EnablePriorityAndFairness {
		return nil
	}
	return apf.New(apf.Config{FlowSchemas: s.FlowSchemas, PriorityLevels: s.PriorityLevels,
		ServerConcurrencyLimit: o.Auth.MaxRequestsInflight + o.Auth.MaxMutatingRequestsInflight})
}

// endpointReconciler builds the endpoint reconciler of this replica
// (--endpoint-reconciler-type lease or master-count) over the stores of
// leases, endpoints and endpoint slices the groups serve.
func endpointReconciler(o *Options, groups []rest.APIGroupInfo, securePort int) (*endpoints.Reconciler, error) {
	eps, ok := servedStorage(groups, "", "endpoints").(endpoints.Endpoints)
	if !ok {
		return nil, fmt.Errorf("--endpoint-reconciler-type=%s: endpoints are not served", o.EndpointReconcilerType)
	}
	slices, ok := servedStorage(groups, "discovery.k8s.io", "endpointslices").(endpoints.EndpointSlices)
	if !ok {
		return nil, fmt.Errorf("--endpoint-reconciler-type=%s: endpointslices are not served", o.EndpointReconcilerType)
	}
	addr := o.advertiseAddress()
	if !endpoints.ValidAddress(addr) {
		// As kube's reconciler, never list a loopback or link-local
		// address: a server on 127.0.0.1 (the default) leaves them alone.
		slog.Warn("the kubernetes service's endpoints are not kept: set --advertise-address to an address other hosts reach", "advertise-address", addr)
		return nil, nil
	}
	// The lease is named after where the replica is reached, as kube's
	// identity lease is after its host: a restarted replica takes its
	// lease back.
	sum := sha256.Sum256([]byte(net.JoinHostPort(addr.String(), strconv.Itoa(securePort))))
	cfg := endpoints.Config{
		ID:      hex.EncodeToString(sum[:8]),
		Address: addr, Port: int32(securePort),
		TTL: o.EndpointReconcilerTTL, Interval: o.EndpointReconcilerInterval,
	}
	if o.EndpointReconcilerType == "master-count" {
		return endpoints.NewCounted(cfg, o.Kube.APIServerCount, eps, slices), nil
	}
	leases, ok := servedStorage(groups, "coordination.k8s.io", "leases").(endpoints.Leases)
	if !ok {
		return nil, fmt.Errorf("--endpoint-reconciler-type=lease: leases are not served")
	}
	return endpoints.New(cfg, leases, eps, slices), nil
}

// servedStorage is the storage of resource in group (preferred version),
// or nil.
func servedStorage(groups []rest.APIGroupInfo, group, resource string) rest.Storage {
	for _, g := range groups {
		if g.GroupName == group {
			return g.VersionedResourcesStorageMap[g.PrioritizedVersions[0]][resource]
		}
	}
	return nil
}

// apiServiceRegistration builds the controller that keeps one Local
// APIService per group version the server serves (those kube's table
// names; apiregistration.k8s.io's own are served by the aggregator and
// listed by none, as in kube).
func apiServiceRegistration(groups []rest.APIGroupInfo, s apiregistration.GroupStorage) *autoregister.Controller {
	c := autoregister.New(s.APIServices)
	for _, g := range groups {
		if g.GroupName == apiregistrationv1.GroupName {
			continue
		}
		for _, version := range g.PrioritizedVersions {
			gv := schema.GroupVersion{Group: g.GroupName, Version: version}
			if p, ok := autoregister.BuiltinPriority(gv); ok {
				c.AddOnStart(gv, p)
			} else {
				slog.Info("autoregister: no APIService for a group version kube lists none for", "groupVersion", gv)
			}
		}
	}
	return c
}
