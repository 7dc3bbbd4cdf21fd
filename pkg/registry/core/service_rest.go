package core

import (
	"context"
	"fmt"
	"net/netip"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// DefaultServiceClusterIPRange is kube-apiserver's built-in default of
// --service-cluster-ip-range.
var DefaultServiceClusterIPRange = netip.MustParsePrefix("10.0.0.0/24")

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

// newServiceAllocators builds the allocators over their own raw stores
// (no watch cache: they read and write etcd directly).
func newServiceAllocators(getter generic.RESTOptionsGetter, cidr netip.Prefix, nodePorts utilnet.PortRange) (*serviceAllocators, func(), error) {
	ipOpts, err := getter.GetRESTOptions(schema.GroupResource{Group: networkingv1.GroupName, Resource: "ipaddresses"})
	if err != nil {
		return nil, nil, err
	}
	ipStore, destroyIPs, err := ipOpts.StorageFactory(rawStorageConfig("ipaddresses.networking.k8s.io", ipOpts.ResourcePrefix,
		func() runtime.Object { return &networkingv1.IPAddress{} }))
	if err != nil {
		return nil, nil, fmt.Errorf("building the store of service IP addresses: %w", err)
	}
	ips, err := newIPAllocator(cidr, ipStore, ipOpts.ResourcePrefix)
	if err != nil {
		destroyIPs()
		return nil, nil, fmt.Errorf("service cluster IP range: %w", err)
	}
	portOpts, err := getter.GetRESTOptions(schema.GroupResource{Resource: "servicenodeportallocations"})
	if err != nil {
		destroyIPs()
		return nil, nil, err
	}
	// kube keeps the bitmap at <prefix>/ranges/servicenodeports.
	portKey := path.Dir(portOpts.ResourcePrefix) + "/ranges/servicenodeports"
	portStore, destroyPorts, err := portOpts.StorageFactory(rawStorageConfig("servicenodeportallocations", path.Dir(portKey),
		func() runtime.Object { return &corev1.RangeAllocation{} }))
	if err != nil {
		destroyIPs()
		return nil, nil, fmt.Errorf("building the store of service node ports: %w", err)
	}
	destroy := func() {
		destroyPorts()
		destroyIPs()
	}
	return &serviceAllocators{ips: ips, ports: newPortAllocator(nodePorts, portStore, portKey)}, destroy, nil
}

func rawStorageConfig(resource, prefix string, newFunc func() runtime.Object) storage.Config {
	return storage.Config{
		Resource:       resource,
		ResourcePrefix: prefix,
		NewFunc:        newFunc,
		AttrFunc:       generic.DefaultAttrFunc(false),
		KeyFunc: func(obj runtime.Object) (string, error) {
			m, err := meta.Accessor(obj)
			if err != nil {
				return "", err
			}
			return prefix + "/" + m.GetName(), nil
		},
		Paging: true,
	}
}
