package core

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// ServiceRepair runs the repair of the service allocators, as
// kube-apiserver's repair controllers do (started by its core storage):
// what a server that crashed between a reservation and the write of its
// service leaked is released, what a service holds that is not reserved
// is reserved again. Every replica runs it; each repair writes only over
// the state it read.
type ServiceRepair struct {
	al       *serviceAllocators
	services *generic.Store
	ports    *portallocator.Repair
	// IPInterval and PortInterval are how often the cluster IPs and the
	// node ports are repaired: kube's IPAddress repair looks at a leaked
	// address again once its 60 s grace is over, and its node port repair
	// runs every 3 minutes (a port is released by the third run that
	// finds it leaked).
	IPInterval, PortInterval time.Duration
}

func newServiceRepair(al *serviceAllocators, services *generic.Store) *ServiceRepair {
	return &ServiceRepair{al: al, services: services, ports: portallocator.NewRepair(al.ports),
		IPInterval: time.Minute, PortInterval: 3 * time.Minute}
}

// Run repairs at once, then every interval, until ctx ends.
func (r *ServiceRepair) Run(ctx context.Context) {
	ips, ports := time.NewTicker(r.IPInterval), time.NewTicker(r.PortInterval)
	defer ips.Stop()
	defer ports.Stop()
	r.repair(ctx, r.RepairIPs, "cluster IPs")
	r.repair(ctx, r.RepairPorts, "node ports")
	for {
		select {
		case <-ctx.Done():
			return
		case <-ips.C:
			r.repair(ctx, r.RepairIPs, "cluster IPs")
		case <-ports.C:
			r.repair(ctx, r.RepairPorts, "node ports")
		}
	}
}

func (r *ServiceRepair) repair(ctx context.Context, f func(context.Context) error, what string) {
	if err := f(ctx); err != nil && ctx.Err() == nil {
		slog.Warn("service allocators: repair failed; trying again later", "allocator", what, "err", err)
	}
}

// RepairIPs runs one repair of the cluster IPs.
func (r *ServiceRepair) RepairIPs(ctx context.Context) error {
	// The time is taken first: an address is never thought older than it
	// was when its service was looked for.
	now := time.Now()
	var errs []error
	for _, ips := range r.al.ips {
		errs = append(errs, ips.Repair(ctx, r.list, now))
	}
	return errors.Join(errs...)
}

// RepairPorts runs one repair of the node ports.
func (r *ServiceRepair) RepairPorts(ctx context.Context) error {
	return r.ports.RunOnce(ctx, r.list)
}

// list reads every service, as of now.
func (r *ServiceRepair) list(ctx context.Context) ([]corev1.Service, error) {
	res, err := r.services.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	services := make([]corev1.Service, len(res.Items))
	for i, item := range res.Items {
		if err := item.Decode(&services[i]); err != nil {
			return nil, err
		}
	}
	return services, nil
}
