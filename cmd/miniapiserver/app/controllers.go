package app

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"net"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/apfconfig"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/autoregister"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/endpoints"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/garbagecollector"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiregistration"
	"github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// namespaceController builds the namespace controller over the core
// group's namespaces and every built group: it deletes every namespaced
// resource that can be listed and deleted as a collection.
func namespaceController(st *stores, crds *crd.Controller) *namespace.Controller {
	return namespace.New(st.core.Namespaces, st.core.NamespaceFinalize, st.core.NamespaceStatus, namespace.ServedResources(st.groups), func() []namespace.Resource {
		// The custom resources served for now: kube's namespace controller
		// finds them in discovery.
		var out []namespace.Resource
		for _, served := range crds.Served() {
			if served.Store.NamespaceScoped() {
				gvr := schema.GroupVersionResource{Group: served.Group.GroupName, Version: served.Group.PrioritizedVersions[0], Resource: served.Resource()}
				out = append(out, namespace.Resource{GVR: gvr, Deleter: served.Store, Lister: served.Store})
			}
		}
		return out
	})
}

// garbageCollector builds the ownerReference garbage collector over
// every built resource it can follow (garbagecollector.ServedResources)
// and the custom resources served for now.
func garbageCollector(st *stores, crds *crd.Controller) *garbagecollector.Controller {
	return garbagecollector.New(garbagecollector.ServedResources(st.groups), func() []garbagecollector.Resource {
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

// flowControlController builds the controller that keeps kube's flow
// control configuration, over the flowcontrol.apiserver.k8s.io storages.
func flowControlController(s flowcontrol.Storage) *apfconfig.Controller {
	return apfconfig.New(apfconfig.Config{FlowSchemas: s.FlowSchemas, FlowSchemaStatus: s.FlowSchemaStatus, PriorityLevels: s.PriorityLevels})
}

// priorityAndFairness is API Priority and Fairness over the stored
// configuration, sharing both in-flight limits as its seats (nil when
// --enable-priority-and-fairness=false).
func priorityAndFairness(o *Options, s flowcontrol.Storage, reg prometheus.Registerer) *apf.Controller {
	if !o.Auth.EnablePriorityAndFairness {
		return nil
	}
	return apf.New(apf.Config{FlowSchemas: s.FlowSchemas, PriorityLevels: s.PriorityLevels,
		ServerConcurrencyLimit: o.Auth.MaxRequestsInflight + o.Auth.MaxMutatingRequestsInflight, Metrics: reg})
}

// endpointReconciler builds the endpoint reconciler of this replica
// (--endpoint-reconciler-type lease or master-count) over the stores of
// leases, endpoints and endpoint slices; nil when the advertised address
// is not one other hosts reach.
func endpointReconciler(o *Options, st *stores, securePort int) *endpoints.Reconciler {
	addr := o.advertiseAddress()
	if !endpoints.ValidAddress(addr) {
		// As kube's reconciler, never list a loopback or link-local
		// address: a server on 127.0.0.1 (the default) leaves them alone.
		slog.Warn("the kubernetes service's endpoints are not kept: set --advertise-address to an address other hosts reach", "advertise-address", addr)
		return nil
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
		return endpoints.NewCounted(cfg, o.Kube.APIServerCount, st.core.Endpoints, st.discovery.EndpointSlices)
	}
	return endpoints.New(cfg, st.coordination.Leases, st.core.Endpoints, st.discovery.EndpointSlices)
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
