package app

import (
	"context"
	"sync"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
)

// loops are background loops with one lifetime, which they own: Go starts
// each with the loops' ctx, and stop ends that ctx and waits until every
// loop has returned. A loop returns once ctx ends.
type loops struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newLoops returns loops whose ctx ends with parent's, or at stop.
func newLoops(parent context.Context) *loops {
	ctx, cancel := context.WithCancel(parent)
	return &loops{ctx: ctx, cancel: cancel}
}

// Go runs run(ctx), with the loops' ctx, in a goroutine of its own.
func (l *loops) Go(run func(ctx context.Context)) {
	l.wg.Go(func() { run(l.ctx) })
}

// stop ends the loops' ctx and waits until every loop has returned. It may
// be called again.
func (l *loops) stop() {
	l.cancel()
	l.wg.Wait()
}

// stopLoops stops the server's loops: those stopped first at a shutdown
// (preShutdown), then the others.
func (s *Server) stopLoops() {
	s.preShutdown.stop()
	s.loops.stop()
}

// startLoops is the part of Start that starts the server's background
// loops (s.loops owns them) and, meanwhile, writes what kube-apiserver
// writes at start: it returns once those objects are written.
func (s *Server) startLoops(o *Options, creds *credentials, b *builtStorage, g *builtGroups, adm *builtAdmission, h *builtHandler) error {
	// From here on loops run: a start that fails stops them before the
	// storage they use is destroyed.
	s.cleanup = append(s.cleanup, s.stopLoops)
	st := g.stores
	// The bootstrap policy and the flow control configuration are written
	// in the background, meanwhile: /healthz waits for them.
	s.startRBAC(g.authorization, st.rbac, o.controllerEnabled(clusterRoleAggregationName))
	if r := g.authorization.reloader; r != nil {
		s.loops.Go(r.run)
	}
	if r := h.sec.authnReloader; r != nil {
		s.loops.Go(r.run)
	}
	s.loops.Go(h.flowControl.Run)
	if h.fairness != nil {
		s.loops.Go(h.fairness.Run)
	}
	port := h.securePort()
	keepers, err := writeBootstrapObjects(s.loops.ctx, o, st, creds.extensionAuthData(o), port)
	if err != nil {
		return err
	}
	for _, run := range keepers {
		s.loops.Go(run)
	}
	s.startStorageLoops(o, b.clients, st)
	if o.EndpointReconcilerType != "none" {
		// nil: no address to list.
		if reconciler := endpointReconciler(o, st, port); reconciler != nil {
			// Stopped first when the server stops (kube's pre-shutdown
			// hook): the endpoints stop listing this replica while it
			// still serves.
			s.preShutdown.Go(reconciler.Run)
		}
	}
	s.startControllers(o, b, g, adm, h)
	return nil
}

// startStorageLoops starts the loops that keep etcd and the services'
// allocations.
func (s *Server) startStorageLoops(o *Options, clients etcdClients, st *stores) {
	// Each etcd's history is compacted, as kube compacts each server
	// list's; only the main etcd is defragmented (an override's is an
	// external etcd, its operator's to defragment).
	for _, c := range clients.all() {
		s.loops.Go(func(ctx context.Context) { etcd3.RunCompactor(ctx, c, o.EtcdCompactionInterval) })
	}
	s.loops.Go(func(ctx context.Context) {
		etcd3.RunMaintenance(ctx, clients.main, etcd3.MaintenanceConfig{Interval: o.EtcdDefragInterval, DefragThreshold: o.EtcdDefragThreshold})
	})
	if o.ServiceNodePortRepairInterval > 0 {
		st.core.ServiceRepair.PortInterval = o.ServiceNodePortRepairInterval
	}
	s.loops.Go(st.core.ServiceRepair.Run)
}

// startControllers starts the in-process controllers: admission's
// sources, the CRD controller, the aggregator's, and those of kube's
// controller manager --controllers runs here.
func (s *Server) startControllers(o *Options, b *builtStorage, g *builtGroups, adm *builtAdmission, h *builtHandler) {
	st := g.stores
	s.loops.Go(adm.policies.mutating.Run)
	s.loops.Go(adm.policies.validating.Run)
	crdController := crd.New(crd.Config{
		Definitions: st.apiextensions.CustomResourceDefinitions, Status: st.apiextensions.Status,
		Server: h.api, Storage: customResourceOptions{b.getter},
		Services: st.serviceResolver(), APIServices: h.apiServices,
	})
	s.loops.Go(func(ctx context.Context) {
		adm.webhooks.Run(ctx, h.api, st.admissionRegistration.MutatingWebhookConfigurations,
			st.admissionRegistration.ValidatingWebhookConfigurations)
	})
	s.loops.Go(crdController.Run)
	s.loops.Go(func(ctx context.Context) {
		// As kube's: the APIServices of custom resources left from an
		// earlier run are kept, not deleted, until the definitions have
		// been listed and registered them again.
		select {
		case <-ctx.Done():
			return
		case <-crdController.Listed():
		}
		h.apiServices.Run(ctx)
	})
	s.loops.Go(availabilityController(st, h.proxy, h.api).Run)
	if o.controllerEnabled(namespaceControllerName) {
		s.loops.Go(namespaceController(st, crdController).Run)
	}
	if o.controllerEnabled(garbageCollectorName) {
		s.GarbageCollector = garbageCollector(st, crdController)
		s.loops.Go(s.GarbageCollector.Run)
	}
}
