package endpoints

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// NewCounted returns a reconciler of kube's master-count kind
// (--endpoint-reconciler-type=master-count with --apiserver-count=count):
// there is no lease, so a replica cannot tell a live replica from a dead
// one. Each puts its own address in the endpoints, and when that makes
// more than count addresses it drops those that follow its own in sorted
// order (wrapping around): replicas that agree on count, each doing so at
// every interval, converge on a list of count addresses holding every
// live one, once no more than count run. A replica stopped takes its
// address out.
func NewCounted(cfg Config, count int, endpoints Endpoints, slices EndpointSlices) *Reconciler {
	return &Reconciler{cfg: cfg, endpoints: endpoints, slices: slices, count: count}
}

// countedAddresses are the addresses the stored endpoints ep should list,
// by the master-count rule. Endpoints not in the shape the reconcilers
// write (one subset) are replaced by this replica's address alone, as
// kube does; the port is always this replica's.
func (r *Reconciler) countedAddresses(ep *corev1.Endpoints) []string {
	own := r.cfg.Address.String()
	if len(ep.Subsets) != 1 {
		return []string{own}
	}
	addresses := make([]string, 0, len(ep.Subsets[0].Addresses)+1)
	for _, a := range ep.Subsets[0].Addresses {
		addresses = append(addresses, a.IP)
	}
	if !slices.Contains(addresses, own) {
		addresses = append(addresses, own)
	}
	slices.Sort(addresses)
	addresses = slices.Compact(addresses)
	for len(addresses) > r.count {
		i := (slices.Index(addresses, own) + 1) % len(addresses)
		addresses = slices.Delete(addresses, i, i+1)
	}
	return addresses
}

// addressesWithoutThis are the stored endpoints' addresses but this
// replica's.
func (r *Reconciler) addressesWithoutThis(ep *corev1.Endpoints) []string {
	var addresses []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			if a.IP != r.cfg.Address.String() {
				addresses = append(addresses, a.IP)
			}
		}
	}
	slices.Sort(addresses)
	return slices.Compact(addresses)
}
