package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
)

// portOp is one request's use of the node port allocator (kube's
// PortAllocationOperation): ports it reserved are freed if the request
// fails, ports it gave up are freed once it succeeds. A dry run reserves
// nothing and answers as kube's does.
type portOp struct {
	ports     *portallocator.Allocator
	dryRun    bool
	allocated []int
	deferred  []int
}

func (al *serviceAllocators) newPortOp(txn *allocTxn, dryRun bool) *portOp {
	op := &portOp{ports: al.ports, dryRun: dryRun}
	if dryRun {
		return op
	}
	release := func(ctx context.Context, ports []int) {
		if err := op.ports.Release(ctx, ports...); err != nil {
			slog.Error("releasing node ports", "ports", ports, "err", err)
		}
	}
	txn.onRevert = append(txn.onRevert, func(ctx context.Context) { release(ctx, op.allocated) })
	txn.onCommit = append(txn.onCommit, func(ctx context.Context) { release(ctx, op.deferred) })
	return op
}

func (op *portOp) allocate(ctx context.Context, port int) error {
	if op.dryRun {
		// kube's dry run only asks whether the port is taken.
		has, err := op.ports.Has(ctx, port)
		if err != nil {
			return err
		}
		if has || slices.Contains(op.allocated, port) {
			return portallocator.ErrAllocated
		}
		op.allocated = append(op.allocated, port)
		return nil
	}
	if err := op.ports.Allocate(ctx, port); err != nil {
		return err
	}
	op.allocated = append(op.allocated, port)
	return nil
}

func (op *portOp) allocateNext(ctx context.Context) (int, error) {
	if op.dryRun {
		// kube's dry run makes ports up above the range: 32769, 32770...
		port := 32769
		if len(op.allocated) > 0 {
			port = slices.Max(op.allocated) + 1
		}
		op.allocated = append(op.allocated, port)
		return port, nil
	}
	port, err := op.ports.AllocateNext(ctx)
	if err != nil {
		return 0, err
	}
	op.allocated = append(op.allocated, port)
	return port, nil
}

func (op *portOp) releaseOnCommit(ports ...int) {
	op.deferred = append(op.deferred, ports...)
}

// nodePortError is kube's error for a node port that cannot be had: 422
// for the client's mistakes, 500 for storage failures.
func nodePortError(svc *corev1.Service, i int, port int32, err error) error {
	var notInRange portallocator.NotInRangeError
	if errors.Is(err, portallocator.ErrAllocated) || errors.As(err, &notInRange) {
		return invalidService(svc, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), port, err.Error())})
	}
	return apierrors.NewInternalError(err)
}

// initNodePorts gives every port of a new NodePort or LoadBalancer
// service a node port: the one asked for, or a free one. Ports with the
// same number (TCP and UDP 53) share one node port.
func initNodePorts(ctx context.Context, svc *corev1.Service, op *portOp) error {
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue // allocate none, but honour requests
		}
		shared := byPort[sp.Port]
		switch {
		case shared == 0:
			if np := requestedNodePort(sp.Port, svc.Spec.Ports); np != 0 {
				if err := op.allocate(ctx, int(np)); err != nil {
					return nodePortError(svc, i, np, err)
				}
				sp.NodePort = np
			} else {
				np, err := op.allocateNext(ctx)
				if err != nil {
					return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
				}
				sp.NodePort = int32(np)
			}
			byPort[sp.Port] = sp.NodePort
		case sp.NodePort == 0:
			sp.NodePort = shared
		case sp.NodePort != shared:
			if err := op.allocate(ctx, int(sp.NodePort)); err != nil {
				return nodePortError(svc, i, sp.NodePort, err)
			}
		}
	}
	return nil
}

// requestedNodePort returns the node port asked for by any port with this
// number.
func requestedNodePort(port int32, ports []corev1.ServicePort) int32 {
	for _, sp := range ports {
		if sp.Port == port && sp.NodePort != 0 {
			return sp.NodePort
		}
	}
	return 0
}

// updateNodePorts reserves the node ports an update adds and frees, on
// commit, those it drops.
func updateNodePorts(ctx context.Context, svc, old *corev1.Service, op *portOp) error {
	oldPorts := collectNodePorts(old)
	taken := map[int]bool{}
	type key struct {
		protocol corev1.Protocol
		nodePort int32
	}
	var seen []key
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if sp.NodePort == 0 && !shouldAllocateNodePorts(svc) {
			continue
		}
		if sp.NodePort != 0 {
			if !slices.Contains(oldPorts, int(sp.NodePort)) && !taken[int(sp.NodePort)] {
				if err := op.allocate(ctx, int(sp.NodePort)); err != nil {
					return nodePortError(svc, i, sp.NodePort, err)
				}
				taken[int(sp.NodePort)] = true
			}
		} else {
			np, err := op.allocateNext(ctx)
			if err != nil {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: %w", err))
			}
			sp.NodePort = int32(np)
		}
		k := key{sp.Protocol, sp.NodePort}
		if slices.Contains(seen, k) {
			return apierrors.NewInternalError(fmt.Errorf("duplicate nodePort: {%s %d}", sp.Protocol, sp.NodePort))
		}
		seen = append(seen, k)
	}
	newPorts := collectNodePorts(svc)
	for _, p := range oldPorts {
		if !slices.Contains(newPorts, p) {
			op.releaseOnCommit(p)
		}
	}
	return nil
}

// allocHealthCheckNodePort reserves the health check node port of a
// LoadBalancer service with externalTrafficPolicy Local.
func allocHealthCheckNodePort(ctx context.Context, svc *corev1.Service, op *portOp) error {
	if np := svc.Spec.HealthCheckNodePort; np != 0 {
		if err := op.allocate(ctx, int(np)); err != nil {
			return fmt.Errorf("failed to allocate requested HealthCheck NodePort %v: %v", np, err)
		}
		return nil
	}
	np, err := op.allocateNext(ctx)
	if err != nil {
		return fmt.Errorf("failed to allocate a HealthCheck NodePort %v: %v", np, err)
	}
	svc.Spec.HealthCheckNodePort = int32(np)
	return nil
}

func collectNodePorts(svc *corev1.Service) []int {
	var out []int
	for _, sp := range svc.Spec.Ports {
		if sp.NodePort != 0 {
			out = append(out, int(sp.NodePort))
		}
	}
	return out
}

func isNodePortType(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// shouldAllocateNodePorts: NodePort services always get node ports,
// LoadBalancer ones unless allocateLoadBalancerNodePorts is false.
func shouldAllocateNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// needsNodePort: kube's strategy helper (for the fields it may wipe).
func needsNodePort(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort ||
		(svc.Spec.Type == corev1.ServiceTypeLoadBalancer && shouldAllocateNodePorts(svc))
}

// needsHealthCheck: LoadBalancer services that keep client IPs (Local)
// get a health check node port.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

func isHeadless(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) > 0 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}
