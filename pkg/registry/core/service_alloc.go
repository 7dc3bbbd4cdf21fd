package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/ipallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
)

// serviceAllocators reserve what a service holds outside its own key: its
// cluster IPs and its node ports. A single-stack cluster has the
// allocator of one IP family (its service CIDR's), and requests for
// dual-stack services fail as on a single-stack kube cluster; a
// dual-stack one has an allocator of each family.
type serviceAllocators struct {
	ips     map[corev1.IPFamily]*ipallocator.Allocator
	primary corev1.IPFamily // the first service CIDR's: services' default
	ports   *portallocator.Allocator
}

func (al *serviceAllocators) dualStack() bool { return len(al.ips) == 2 }

// allocTxn collects what a create or update reserved and what it will
// free: commit frees what the new state no longer holds, revert frees what
// was reserved. finish runs one or the other, once.
type allocTxn struct {
	onCommit, onRevert []func(ctx context.Context)
}

// It runs even when the request's context is done: a client that went
// away must not leak what it reserved.
func (t *allocTxn) finish(ctx context.Context, success bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	fns := t.onRevert
	if success {
		fns = t.onCommit
	}
	for _, fn := range fns {
		fn(ctx)
	}
	t.onCommit, t.onRevert = nil, nil
}

func invalidService(svc *corev1.Service, errs field.ErrorList) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, errs)
}

// allocateCreate fills the IP family fields of a new service and reserves
// its cluster IP and node ports.
func (al *serviceAllocators) allocateCreate(ctx context.Context, svc *corev1.Service, dryRun bool) (*allocTxn, error) {
	txn := &allocTxn{}
	normalizeClusterIPs(svc, nil)
	if err := al.initIPFamilyFields(svc, nil); err != nil {
		return nil, err
	}
	if err := al.allocClusterIPs(ctx, svc, txn, dryRun); err != nil {
		txn.finish(ctx, false)
		return nil, err
	}
	op := al.newPortOp(txn, dryRun)
	if needsNodePort(svc) {
		if err := initNodePorts(ctx, svc, op); err != nil {
			txn.finish(ctx, false)
			return nil, err
		}
	}
	if needsHealthCheck(svc) {
		if err := allocHealthCheckNodePort(ctx, svc, op); err != nil {
			txn.finish(ctx, false)
			return nil, apierrors.NewInternalError(err)
		}
	}
	return txn, nil
}

// allocateUpdate does the same for an update of old into svc: it keeps
// what the client left out (an update need not repeat allocated values),
// reserves what the new state needs and, on commit, frees what it dropped.
func (al *serviceAllocators) allocateUpdate(ctx context.Context, svc, old *corev1.Service, dryRun bool) (*allocTxn, error) {
	txn := &allocTxn{}
	patchAllocatedValues(svc, old)
	normalizeClusterIPs(svc, old)
	if err := al.initIPFamilyFields(svc, old); err != nil {
		return nil, err
	}
	if err := al.updateClusterIPs(ctx, svc, old, txn, dryRun); err != nil {
		txn.finish(ctx, false)
		return nil, err
	}
	op := al.newPortOp(txn, dryRun)
	if isNodePortType(old) && (svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeClusterIP) {
		op.releaseOnCommit(collectNodePorts(old)...)
	}
	if isNodePortType(svc) {
		if err := updateNodePorts(ctx, svc, old, op); err != nil {
			txn.finish(ctx, false)
			return nil, err
		}
	}
	switch {
	case !needsHealthCheck(old) && needsHealthCheck(svc):
		if err := allocHealthCheckNodePort(ctx, svc, op); err != nil {
			txn.finish(ctx, false)
			return nil, apierrors.NewInternalError(err)
		}
	case needsHealthCheck(old) && !needsHealthCheck(svc):
		op.releaseOnCommit(int(old.Spec.HealthCheckNodePort))
	}
	return txn, nil
}

// release frees everything a deleted service held.
func (al *serviceAllocators) release(ctx context.Context, svc *corev1.Service) {
	if needsClusterIP(svc) && !isHeadless(svc) {
		for _, s := range svc.Spec.ClusterIPs {
			al.releaseIP(ctx, svc, s)
		}
	}
	ports := collectNodePorts(svc)
	if needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort > 0 {
		ports = append(ports, int(svc.Spec.HealthCheckNodePort))
	}
	if err := al.ports.Release(ctx, ports...); err != nil {
		slog.Error("releasing the node ports of a service", "service", svc.Namespace+"/"+svc.Name, "ports", ports, "err", err)
	}
}

func (al *serviceAllocators) releaseIP(ctx context.Context, svc *corev1.Service, s string) {
	ip, err := netip.ParseAddr(s)
	if err != nil || al.ips[familyOf(ip)] == nil {
		return
	}
	if err := al.ips[familyOf(ip)].Release(ctx, svc.Namespace, svc.Name, ip); err != nil {
		slog.Error("releasing the cluster IP of a service", "service", svc.Namespace+"/"+svc.Name, "ip", s, "err", err)
	}
}

func familyOf(ip netip.Addr) corev1.IPFamily {
	if ip.Is4() || ip.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

func familyOfString(s string) corev1.IPFamily {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return corev1.IPFamily("unknown")
	}
	return familyOf(ip)
}

func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

// initIPFamilyFields is kube's: it defaults ipFamilyPolicy and ipFamilies
// from the cluster's configuration and the cluster IPs asked for, and
// rejects what the cluster cannot serve.
func (al *serviceAllocators) initIPFamilyFields(svc, old *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || isMatchingPreferDualStack(svc, old) {
		return nil
	}
	headlessNoSelector := svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0
	if svc.Spec.IPFamilyPolicy == nil {
		policy := corev1.IPFamilyPolicySingleStack
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			policy = *old.Spec.IPFamilyPolicy
		case headlessNoSelector:
			policy = corev1.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &policy
	}
	if errs := validateServiceClusterIPsRelatedFields(svc, old); len(errs) != 0 {
		return invalidService(svc, errs)
	}
	policyPath := field.NewPath("spec", "ipFamilyPolicy")
	var errs field.ErrorList
	single := *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack
	if old != nil {
		if single {
			// Naming single-stack is how a client drops the secondary IP.
			if slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && len(svc.Spec.ClusterIPs) > 1 {
				svc.Spec.ClusterIPs = svc.Spec.ClusterIPs[:1]
			}
			if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) && len(svc.Spec.IPFamilies) > 1 {
				svc.Spec.IPFamilies = svc.Spec.IPFamilies[:1]
			}
		} else {
			if len(svc.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
				errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary cluster IP"))
			}
			if len(svc.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) < len(old.Spec.IPFamilies) {
				errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'SingleStack' to release the secondary IP family"))
			}
		}
	}
	if single {
		if len(svc.Spec.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(svc.Spec.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(policyPath, svc.Spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	// Infer ipFamilies from the cluster IPs asked for.
	for i, ip := range svc.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i >= len(svc.Spec.IPFamilies) {
			if fam := familyOfString(ip); al.ips[fam] == nil {
				errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), svc.Spec.ClusterIPs,
					fmt.Sprintf("%s is not configured on this cluster", fam)))
			} else {
				svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, fam)
			}
		}
	}
	if len(errs) > 0 {
		return invalidService(svc, errs)
	}
	if headlessNoSelector {
		// kube allows any families here, even on a single-stack cluster.
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{al.primary}
		}
		if len(svc.Spec.IPFamilies) < 2 && *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
			svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
		}
		return nil
	}
	return al.completeIPFamilies(svc)
}

// completeIPFamilies checks that the cluster has the families a service
// (not headless without a selector) asks for, and completes them: the
// primary one when none is named, and the other too for PreferDualStack
// and RequireDualStack on a dual-stack cluster.
func (al *serviceAllocators) completeIPFamilies(svc *corev1.Service) error {
	var errs field.ErrorList
	if *svc.Spec.IPFamilyPolicy == corev1.IPFamilyPolicyRequireDualStack && !al.dualStack() {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "this cluster is not configured for dual-stack services"))
	}
	for i, fam := range svc.Spec.IPFamilies {
		if al.ips[fam] == nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), fam, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalidService(svc, errs)
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{al.primary}
	}
	// PreferDualStack and RequireDualStack get both families where the
	// cluster has both: the one named (or the primary) first.
	if *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack && len(svc.Spec.IPFamilies) == 1 && al.dualStack() {
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, otherFamily(svc.Spec.IPFamilies[0]))
	}
	return nil
}

// isMatchingPreferDualStack: an update of a PreferDualStack service that
// changes none of its IP fields leaves them alone, whatever the cluster's
// configuration became.
func isMatchingPreferDualStack(svc, old *corev1.Service) bool {
	if old == nil || svc.Spec.IPFamilyPolicy == nil || old.Spec.Type != svc.Spec.Type || !needsClusterIP(svc) {
		return false
	}
	prefer := corev1.IPFamilyPolicyPreferDualStack
	if *svc.Spec.IPFamilyPolicy != prefer || (old.Spec.IPFamilyPolicy != nil && *old.Spec.IPFamilyPolicy != prefer) {
		return false
	}
	return slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies)
}

// allocClusterIPs reserves the cluster IPs of a service that needs them,
// one per family: the one asked for, or the next free one.
func (al *serviceAllocators) allocClusterIPs(ctx context.Context, svc *corev1.Service, txn *allocTxn, dryRun bool) error {
	if !needsClusterIP(svc) || isHeadless(svc) {
		return nil
	}
	for i := range svc.Spec.IPFamilies {
		if i >= len(svc.Spec.ClusterIPs) {
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "")
		}
		if err := al.allocFamilyIP(ctx, svc, i, txn, dryRun); err != nil {
			return err
		}
	}
	return nil
}

// allocFamilyIP reserves the cluster IP of the service's family i (the
// one asked for at ClusterIPs[i], or the next free one) and sets it there.
func (al *serviceAllocators) allocFamilyIP(ctx context.Context, svc *corev1.Service, i int, txn *allocTxn, dryRun bool) error {
	ips := al.ips[svc.Spec.IPFamilies[i]]
	if ips == nil {
		return nil // validated before: cannot happen
	}
	ip, err := allocIP(ctx, ips, svc, svc.Spec.ClusterIPs[i], dryRun)
	if err != nil {
		return err
	}
	if !dryRun {
		txn.onRevert = append(txn.onRevert, func(ctx context.Context) { al.releaseIP(ctx, svc, ip) })
	}
	svc.Spec.ClusterIPs[i] = ip
	if i == 0 {
		svc.Spec.ClusterIP = ip
	}
	return nil
}

// allocIP reserves requested ("" for any) from ips and returns the
// address, with kube's errors.
func allocIP(ctx context.Context, ips *ipallocator.Allocator, svc *corev1.Service, requested string, dryRun bool) (string, error) {
	clusterIPsPath := field.NewPath("spec", "clusterIPs")
	if requested == "" {
		var ip netip.Addr
		var err error
		if dryRun {
			ip, err = ips.DryRunNext(ctx)
		} else {
			ip, err = ips.AllocateNext(ctx, svc)
		}
		if err != nil {
			return "", apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: %w", svc.Name, err))
		}
		return ip.String(), nil
	}
	ip, err := netip.ParseAddr(requested)
	if err != nil {
		return "", apierrors.NewInternalError(fmt.Errorf("failed to parse service IP %q", requested))
	}
	if dryRun {
		err = ips.CheckRange(ctx, ip)
	} else {
		err = ips.Allocate(ctx, svc, ip)
	}
	if err != nil {
		var outOfRange *ipallocator.OutOfRangeError
		if errors.Is(err, ipallocator.ErrAllocated) || errors.Is(err, ipallocator.ErrMismatchedNetwork) ||
			errors.Is(err, ipallocator.ErrNotReady) || errors.As(err, &outOfRange) {
			return "", invalidService(svc, field.ErrorList{field.Invalid(clusterIPsPath, svc.Spec.ClusterIPs,
				fmt.Sprintf("failed to allocate IP %v: %v", requested, err))})
		}
		return "", apierrors.NewInternalError(fmt.Errorf("failed to allocate IP %v: %w", requested, err))
	}
	return requested, nil
}

// updateClusterIPs handles the type changes that gain or lose cluster
// IPs, and the changes of policy that add or drop the secondary family's.
func (al *serviceAllocators) updateClusterIPs(ctx context.Context, svc, old *corev1.Service, txn *allocTxn, dryRun bool) error {
	if isMatchingPreferDualStack(svc, old) {
		return nil
	}
	switch {
	case old.Spec.Type == corev1.ServiceTypeExternalName && svc.Spec.Type != corev1.ServiceTypeExternalName:
		return al.allocClusterIPs(ctx, svc, txn, dryRun)
	case isHeadless(old):
		return nil
	case old.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.Type == corev1.ServiceTypeExternalName:
		if !dryRun {
			released := slices.Clone(old.Spec.ClusterIPs)
			txn.onCommit = append(txn.onCommit, func(ctx context.Context) {
				for _, ip := range released {
					al.releaseIP(ctx, old, ip)
				}
			})
		}
	case len(old.Spec.IPFamilies) == 1 && len(svc.Spec.IPFamilies) == 2:
		// Upgraded to dual-stack: the secondary family's address, the one
		// asked for or the next free one.
		if len(svc.Spec.ClusterIPs) < 2 {
			svc.Spec.ClusterIPs = append(svc.Spec.ClusterIPs, "")
		}
		return al.allocFamilyIP(ctx, svc, 1, txn, dryRun)
	case len(old.Spec.IPFamilies) == 2 && len(svc.Spec.IPFamilies) == 1 && len(old.Spec.ClusterIPs) == 2:
		// Downgraded: the secondary address is freed once the update is
		// stored (initIPFamilyFields already dropped it from the spec).
		if !dryRun {
			released := old.Spec.ClusterIPs[1]
			txn.onCommit = append(txn.onCommit, func(ctx context.Context) { al.releaseIP(ctx, old, released) })
		}
	}
	return nil
}
