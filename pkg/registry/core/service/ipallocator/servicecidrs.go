package ipallocator

import (
	"context"
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// readyRanges reads the ServiceCIDRs and returns the ranges of the
// cluster's family that addresses may be allocated from, once each, in
// the order of their ServiceCIDRs' names.
func (a *Allocator) readyRanges(ctx context.Context) ([]*ipRange, error) {
	list, err := a.cidrs.GetList(ctx, a.cidrsPrefix+"/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		return nil, err
	}
	var ranges []*ipRange
	seen := map[netip.Prefix]bool{}
	for _, item := range list.Items {
		sc := &networkingv1.ServiceCIDR{}
		if err := item.Decode(sc); err != nil {
			return nil, err
		}
		if !isReady(sc) {
			continue
		}
		for _, s := range sc.Spec.CIDRs {
			p, err := netip.ParsePrefix(s)
			if err != nil || familyOf(p.Addr()) != a.family || seen[p] {
				continue
			}
			if r, err := newRange(p); err == nil {
				seen[p] = true
				ranges = append(ranges, r)
			}
		}
	}
	return ranges, nil
}

// isReady is kube's: a ServiceCIDR being deleted is not ready; one
// without a Ready condition (no controller has looked at it yet) is.
func isReady(sc *networkingv1.ServiceCIDR) bool {
	if sc.DeletionTimestamp != nil {
		return false
	}
	for _, c := range sc.Status.Conditions {
		if c.Type == networkingv1.ServiceCIDRConditionReady {
			return c.Status == metav1.ConditionTrue
		}
	}
	return true
}
