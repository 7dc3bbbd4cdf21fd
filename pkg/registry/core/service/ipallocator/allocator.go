// Package ipallocator hands out the cluster IPs of services, as kube 1.37
// does: from the ranges of the cluster's ServiceCIDRs, each allocated IP
// being a networking.k8s.io/v1 IPAddress object naming the service that
// holds it. It sits in the registry, below the services' storage
// (pkg/registry/core), which calls it from its hooks; the IPAddress and
// ServiceCIDR objects it reads and writes are the ones the
// networking.k8s.io group serves (Resource and ServiceCIDRResource name
// where they live).
package ipallocator

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The errors of kube's IP allocators, with their messages.
var (
	ErrFull              = errors.New("range is full")
	ErrAllocated         = errors.New("provided IP is already allocated")
	ErrMismatchedNetwork = errors.New("the provided network does not match the current range")
	// ErrNotReady: no ServiceCIDR is ready to allocate from.
	ErrNotReady = errors.New("allocator not ready")
)

// OutOfRangeError is what a dry run says of an address no range holds.
type OutOfRangeError struct {
	IP   netip.Addr
	CIDR netip.Prefix
}

func (e *OutOfRangeError) Error() string {
	return fmt.Sprintf("the provided IP (%v) is not in the valid range. The range of valid IPs is %s", e.IP, e.CIDR)
}

// ManagedBy is the managed-by label of the IPAddress objects the
// allocator writes (kube's).
const ManagedBy = "ipallocator.k8s.io"

// Resource is where the IPAddress objects live: the networking.k8s.io
// resource that serves them, whose key prefix (from a RESTOptionsGetter)
// the allocator writes under, at <prefix>/<ip>. ServiceCIDRResource is
// where the ranges it allocates from live.
var (
	Resource            = networkingv1.Resource("ipaddresses")
	ServiceCIDRResource = networkingv1.Resource("servicecidrs")
)

// Allocator hands out the cluster IPs of services, as kube 1.37's
// allocator over ServiceCIDRs does: from the ranges of every ready
// ServiceCIDR of the cluster's IP family, the family of the primary range
// (--service-cluster-ip-range, whose ServiceCIDR is the default one,
// "kubernetes"). Each allocated IP is an IPAddress object, at
// <prefix>/<ip>, naming the service that holds it. Creating that key only
// if absent is the reservation, so concurrent creates (on this server or
// on other replicas sharing etcd) never hand out one IP twice, and the
// state survives restarts with nothing in memory. The ServiceCIDRs are
// read from etcd at each allocation: a range added, made not ready or
// deleted counts at once.
type Allocator struct {
	primary netip.Prefix
	family  corev1.IPFamily

	ips, cidrs            storage.Interface
	ipPrefix, cidrsPrefix string // key prefixes, without the trailing slash
	// managedFields is the managed fields entry of every IPAddress the
	// allocator writes, but for its time: they all set the same fields.
	managedFieldsOnce sync.Once
	managedFields     metav1.ManagedFieldsEntry
	managedFieldsErr  error
}

// NewFromOptions builds the allocator whose primary range is primary, over
// raw stores (no watch cache: allocations read and write etcd) of the
// IPAddress and ServiceCIDR objects, at the prefixes getter gives them.
// release frees those stores.
func NewFromOptions(primary netip.Prefix, getter generic.RESTOptionsGetter) (a *Allocator, release func(), err error) {
	ips, ipPrefix, releaseIPs, err := rawStore(getter, Resource, func() runtime.Object { return &networkingv1.IPAddress{} })
	if err != nil {
		return nil, nil, err
	}
	cidrs, cidrsPrefix, releaseCIDRs, err := rawStore(getter, ServiceCIDRResource, func() runtime.Object { return &networkingv1.ServiceCIDR{} })
	if err != nil {
		releaseIPs()
		return nil, nil, err
	}
	release = func() {
		releaseCIDRs()
		releaseIPs()
	}
	if a, err = New(primary, ips, ipPrefix, cidrs, cidrsPrefix); err != nil {
		release()
		return nil, nil, fmt.Errorf("service cluster IP range: %w", err)
	}
	return a, release, nil
}

func rawStore(getter generic.RESTOptionsGetter, gr schema.GroupResource, newFunc func() runtime.Object) (storage.Interface, string, func(), error) {
	opts, err := getter.GetRESTOptions(gr)
	if err != nil {
		return nil, "", nil, err
	}
	store, destroy, err := opts.StorageFactory(generic.StorageConfig(gr, opts.ResourcePrefix, newFunc, false))
	if err != nil {
		return nil, "", nil, fmt.Errorf("building the store of %s: %w", gr, err)
	}
	return store, opts.ResourcePrefix, destroy, nil
}

// New returns the allocator whose primary range is primary, over the
// stores of the IPAddress objects (under ipPrefix) and of the ServiceCIDR
// objects (under cidrsPrefix).
func New(primary netip.Prefix, ips storage.Interface, ipPrefix string, cidrs storage.Interface, cidrsPrefix string) (*Allocator, error) {
	if _, err := newRange(primary); err != nil {
		return nil, err
	}
	return &Allocator{
		primary: primary.Masked(), family: familyOf(primary.Addr()),
		ips: ips, ipPrefix: ipPrefix, cidrs: cidrs, cidrsPrefix: cidrsPrefix,
	}, nil
}

func familyOf(ip netip.Addr) corev1.IPFamily {
	if ip.Is4() || ip.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// Family is the IP family of the cluster's services.
func (a *Allocator) Family() corev1.IPFamily { return a.family }

// Allocate reserves ip for svc. An address no ready range holds (the
// network and broadcast addresses included) matches no range of the
// cluster's, in kube's words.
func (a *Allocator) Allocate(ctx context.Context, svc *corev1.Service, ip netip.Addr) error {
	ranges, err := a.readyRanges(ctx)
	if err != nil {
		return err
	}
	for _, r := range ranges {
		if r.contains(ip) {
			return a.create(ctx, svc, ip)
		}
	}
	return ErrMismatchedNetwork
}

// AllocateNext reserves a free address for svc, from the ready ranges in
// the order of their ServiceCIDRs' names (kube's order is a map's).
func (a *Allocator) AllocateNext(ctx context.Context, svc *corev1.Service) (netip.Addr, error) {
	ranges, err := a.readyRanges(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	taken, err := a.allocated(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	reserve := func(ctx context.Context, ip netip.Addr) error { return a.create(ctx, svc, ip) }
	for _, r := range ranges {
		ip, err := r.next(ctx, taken, reserve)
		if !errors.Is(err, ErrFull) {
			return ip, err
		}
	}
	return netip.Addr{}, ErrFull
}

// CheckRange is what a dry run of Allocate checks: that a ready range
// holds ip (kube's message names one range).
func (a *Allocator) CheckRange(ctx context.Context, ip netip.Addr) error {
	ranges, err := a.readyRanges(ctx)
	if err != nil {
		return err
	}
	if len(ranges) == 0 {
		return ErrNotReady
	}
	for _, r := range ranges {
		if r.contains(ip) {
			return nil
		}
	}
	return &OutOfRangeError{IP: ip, CIDR: ranges[0].cidr}
}

// DryRunNext is what a dry run of AllocateNext returns: kube looks for no
// free address, and answers a range's network address.
func (a *Allocator) DryRunNext(ctx context.Context) (netip.Addr, error) {
	ranges, err := a.readyRanges(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	if len(ranges) == 0 {
		return netip.Addr{}, ErrNotReady
	}
	return ranges[0].cidr.Addr(), nil
}

// allocated lists every address reserved, in any range.
func (a *Allocator) allocated(ctx context.Context) (map[netip.Addr]bool, error) {
	list, err := a.ips.GetList(ctx, a.ipPrefix+"/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		return nil, err
	}
	taken := make(map[netip.Addr]bool, len(list.Items))
	for _, item := range list.Items {
		if ip, err := netip.ParseAddr(strings.TrimPrefix(item.Key, a.ipPrefix+"/")); err == nil {
			taken[ip] = true
		}
	}
	return taken, nil
}

// create writes the IPAddress of ip if none exists, with the managed
// fields kube's allocator (a client of its server) leaves.
func (a *Allocator) create(ctx context.Context, svc *corev1.Service, ip netip.Addr) error {
	obj := &networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ip.String(),
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(a.family),
				networkingv1.LabelManagedBy:       ManagedBy,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
	entry, err := a.managedFieldsEntry(obj)
	if err != nil {
		return err
	}
	now := metav1.Now()
	entry.Time = &now
	obj.UID, obj.CreationTimestamp, obj.ManagedFields = types.UID(uuid.NewString()), now, []metav1.ManagedFieldsEntry{entry}
	err = a.ips.Create(ctx, a.ipPrefix+"/"+ip.String(), obj, &networkingv1.IPAddress{}, 0)
	if storage.IsExist(err) {
		return ErrAllocated
	}
	return err
}

// managedFieldsEntry returns the managed fields entry of obj's creation
// by "kube-apiserver", as kube's allocator (a client of its server) leaves
// it. The field manager computes it once: every IPAddress the allocator
// writes has the same fields (the two labels, the parent's resource,
// namespace and name).
func (a *Allocator) managedFieldsEntry(obj *networkingv1.IPAddress) (metav1.ManagedFieldsEntry, error) {
	a.managedFieldsOnce.Do(func() {
		fm, err := fieldmanager.New(networkingv1.SchemeGroupVersion.WithKind("IPAddress"), "", nil)
		if err != nil {
			a.managedFieldsErr = err
			return
		}
		tracked := fm.UpdateNoErrors(&networkingv1.IPAddress{}, obj.DeepCopy(), "kube-apiserver").(*networkingv1.IPAddress)
		if len(tracked.ManagedFields) != 1 {
			a.managedFieldsErr = fmt.Errorf("ipallocator: managed fields of an IPAddress: %+v", tracked.ManagedFields)
			return
		}
		a.managedFields = tracked.ManagedFields[0]
	})
	return a.managedFields, a.managedFieldsErr
}

// Release frees ip, if the service named by ns and name holds it: a stale
// release never frees an address another service holds since. It frees
// the address whether a range still holds it or not (kube leaves those of
// a deleted ServiceCIDR to its repair loop).
func (a *Allocator) Release(ctx context.Context, ns, name string, ip netip.Addr) error {
	err := a.ips.Delete(ctx, a.ipPrefix+"/"+ip.String(), &networkingv1.IPAddress{}, nil, func(_ context.Context, obj runtime.Object) error {
		ref := obj.(*networkingv1.IPAddress).Spec.ParentRef
		if ref == nil || ref.Resource != "services" || ref.Group != "" || ref.Namespace != ns || ref.Name != name {
			return errNotOwner
		}
		return nil
	}, nil)
	if storage.IsNotFound(err) || errors.Is(err, errNotOwner) {
		return nil
	}
	return err
}

// errNotOwner stops a release of an address another service holds.
var errNotOwner = errors.New("held by another service")
