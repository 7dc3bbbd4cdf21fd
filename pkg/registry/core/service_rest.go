package core

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/ipallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// DefaultServiceClusterIPRange is kube-apiserver's built-in default of
// --service-cluster-ip-range.
var DefaultServiceClusterIPRange = netip.MustParsePrefix("10.0.0.0/24")

// DefaultServiceNodePortRange is kube-apiserver's default
// --service-node-port-range.
var DefaultServiceNodePortRange = utilnet.PortRange{Base: 30000, Size: 2768}

// releaseTimeout bounds the release of what a failed or deleted service
// held; it runs even when the request that triggered it is gone.
const releaseTimeout = 30 * time.Second

// hooks reserve a service's cluster IPs and node ports around its writes,
// and release them once it is gone.
func (al *serviceAllocators) hooks() generic.Hooks {
	return generic.Hooks{
		BeginCreate: func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (generic.FinishFunc, error) {
			txn, err := al.allocateCreate(ctx, obj.(*corev1.Service), len(options.DryRun) > 0)
			if err != nil {
				return nil, err
			}
			return txn.finish, nil
		},
		BeginUpdate: func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (generic.FinishFunc, error) {
			txn, err := al.allocateUpdate(ctx, obj.(*corev1.Service), old.(*corev1.Service), len(options.DryRun) > 0)
			if err != nil {
				return nil, err
			}
			return txn.finish, nil
		},
		// Also when a status update removes a service's last finalizer.
		AfterDelete: func(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) {
			if len(options.DryRun) == 0 {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
				defer cancel()
				al.release(ctx, obj.(*corev1.Service))
			}
		},
	}
}

// newServiceAllocators builds the allocators of the cidrs (primary
// first; two of different families for a dual-stack cluster) and of
// nodePorts over their own raw stores; release frees those.
func newServiceAllocators(getter generic.RESTOptionsGetter, cidrs []netip.Prefix, nodePorts utilnet.PortRange) (al *serviceAllocators, release func(), err error) {
	al = &serviceAllocators{ips: map[corev1.IPFamily]*ipallocator.Allocator{}}
	var releases []func()
	release = func() {
		for _, r := range slices.Backward(releases) {
			r()
		}
	}
	for _, cidr := range cidrs {
		ips, releaseIPs, err := ipallocator.NewFromOptions(cidr, getter)
		if err != nil {
			release()
			return nil, nil, err
		}
		releases = append(releases, releaseIPs)
		if al.ips[ips.Family()] != nil {
			release()
			return nil, nil, fmt.Errorf("service cluster IP ranges: %v: two ranges of family %s", cidrs, ips.Family())
		}
		if len(al.ips) == 0 {
			al.primary = ips.Family()
		}
		al.ips[ips.Family()] = ips
	}
	ports, releasePorts, err := portallocator.NewFromOptions(nodePorts, getter)
	if err != nil {
		release()
		return nil, nil, err
	}
	al.ports = ports
	releases = append(releases, releasePorts)
	return al, release, nil
}
