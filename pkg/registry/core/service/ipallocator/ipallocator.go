// Package ipallocator hands out the cluster IPs of services, as kube 1.37
// does: each allocated IP is a networking.k8s.io/v1 IPAddress object
// naming the service that holds it. It sits in the registry, below the
// services' storage (pkg/registry/core), which calls it from its hooks;
// the IPAddress objects it writes are the ones the networking.k8s.io
// group serves (Resource names where they live).
package ipallocator

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strings"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The errors of kube's IP allocators, with their messages.
var (
	ErrFull               = errors.New("range is full")
	ErrAllocated          = errors.New("provided IP is already allocated")
	ErrMismatchedNetwork  = errors.New("the provided network does not match the current range")
	errIPNotInRangeFormat = "the provided IP (%v) is not in the valid range. The range of valid IPs is %s"
)

// ManagedBy is the managed-by label of the IPAddress objects the
// allocator writes (kube's).
const ManagedBy = "ipallocator.k8s.io"

// Resource is where the IPAddress objects live: the networking.k8s.io
// resource that serves them, whose key prefix (from a RESTOptionsGetter)
// the allocator writes under, at <prefix>/<ip>.
var Resource = networkingv1.Resource("ipaddresses")

// Allocator hands out the cluster IPs of one service CIDR, as kube 1.37
// does: each allocated IP is a networking.k8s.io/v1 IPAddress object, at
// <prefix>/ipaddresses/<ip>, naming the service that holds it. Creating
// that key only if absent is the reservation, so concurrent creates (on
// this server or on other replicas sharing etcd) never hand out one IP
// twice, and the state survives restarts with nothing in memory.
//
// Like kube, dynamic allocation prefers the upper part of the range and
// starts at a random address; the lower part (the first min(max(16,
// size/16), 256) addresses) is mostly left to clients that ask for a
// specific IP.
type Allocator struct {
	store  storage.Interface
	prefix string // key prefix, without the trailing slash
	cidr   netip.Prefix
	family corev1.IPFamily
	// first and last usable addresses (not the network address, nor the
	// IPv4 broadcast); offset starts the upper part.
	first, offset, last netip.Addr
	// lowerSize and upperSize count the addresses of each part.
	lowerSize, upperSize *big.Int
}

// NewFromOptions builds the allocator of cidr over a raw store of the
// IPAddress objects (no watch cache: allocations read and write etcd),
// at the prefix getter gives Resource. release frees that store.
func NewFromOptions(cidr netip.Prefix, getter generic.RESTOptionsGetter) (a *Allocator, release func(), err error) {
	opts, err := getter.GetRESTOptions(Resource)
	if err != nil {
		return nil, nil, err
	}
	cfg := generic.StorageConfig(Resource, opts.ResourcePrefix, func() runtime.Object { return &networkingv1.IPAddress{} }, false)
	store, destroy, err := opts.StorageFactory(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the store of service IP addresses: %w", err)
	}
	if a, err = New(cidr, store, opts.ResourcePrefix); err != nil {
		destroy()
		return nil, nil, fmt.Errorf("service cluster IP range: %w", err)
	}
	return a, destroy, nil
}

// New returns the allocator of cidr, whose IPAddress objects store keeps
// under prefix.
func New(cidr netip.Prefix, store storage.Interface, prefix string) (*Allocator, error) {
	cidr = cidr.Masked()
	bits := cidr.Addr().BitLen() - cidr.Bits()
	if cidr.Addr().Is6() && cidr.Bits() < 64 {
		return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", cidr.Bits())
	}
	size := new(big.Int).Lsh(big.NewInt(1), uint(bits))
	size.Sub(size, big.NewInt(1)) // not the network address
	last := lastAddr(cidr)
	family := corev1.IPv6Protocol
	if cidr.Addr().Is4() {
		family = corev1.IPv4Protocol
		size.Sub(size, big.NewInt(1)) // nor the broadcast address
		last = last.Prev()
	}
	if size.Sign() <= 0 {
		return nil, fmt.Errorf("service CIDR %s has no usable address", cidr)
	}
	rangeOffset := calculateRangeOffset(size)
	first := cidr.Addr().Next()
	return &Allocator{
		store: store, prefix: prefix, cidr: cidr, family: family,
		first: first, offset: addOffset(first, big.NewInt(rangeOffset)), last: last,
		lowerSize: big.NewInt(rangeOffset), upperSize: new(big.Int).Sub(size, big.NewInt(rangeOffset)),
	}, nil
}

// calculateRangeOffset is kube's size of the lower part of the range:
// min(max(16, size/16), 256), and none for ranges of 16 addresses or less.
func calculateRangeOffset(size *big.Int) int64 {
	if size.Cmp(big.NewInt(16)) <= 0 {
		return 0
	}
	offset := new(big.Int).Div(size, big.NewInt(16))
	switch {
	case offset.Cmp(big.NewInt(16)) < 0:
		return 16
	case offset.Cmp(big.NewInt(256)) > 0:
		return 256
	}
	return offset.Int64()
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func addOffset(a netip.Addr, off *big.Int) netip.Addr {
	n := new(big.Int).SetBytes(a.AsSlice())
	n.Add(n, off)
	b := n.FillBytes(make([]byte, len(a.AsSlice())))
	out, _ := netip.AddrFromSlice(b)
	return out
}

// CIDR is the range the allocator hands addresses out of.
func (a *Allocator) CIDR() netip.Prefix { return a.cidr }

// Family is the IP family of the range.
func (a *Allocator) Family() corev1.IPFamily { return a.family }

// InRange reports whether ip is a usable address of the range.
func (a *Allocator) InRange(ip netip.Addr) bool {
	return a.cidr.Contains(ip) && ip.Compare(a.first) >= 0 && ip.Compare(a.last) <= 0
}

func (a *Allocator) key(ip netip.Addr) string { return a.prefix + "/" + ip.String() }

// CheckRange is what a dry run of Allocate checks (with kube's message of
// a dry run).
func (a *Allocator) CheckRange(ip netip.Addr) error {
	if !a.InRange(ip) {
		return fmt.Errorf(errIPNotInRangeFormat, ip, a.cidr)
	}
	return nil
}

// Allocate reserves ip for svc. An address outside the usable range
// (the network and broadcast addresses too) matches no range of the
// cluster's, in kube's words.
func (a *Allocator) Allocate(ctx context.Context, svc *corev1.Service, ip netip.Addr) error {
	if !a.InRange(ip) {
		return ErrMismatchedNetwork
	}
	return a.create(ctx, svc, ip)
}

// AllocateNext reserves a free address for svc.
func (a *Allocator) AllocateNext(ctx context.Context, svc *corev1.Service) (netip.Addr, error) {
	taken, err := a.allocated(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, part := range []struct {
		start netip.Addr
		size  *big.Int
	}{{a.offset, a.upperSize}, {a.first, a.lowerSize}} {
		if part.size.Sign() == 0 {
			continue
		}
		ip, err := a.allocateFrom(ctx, svc, part.start, part.size, taken)
		if !errors.Is(err, ErrFull) {
			return ip, err
		}
	}
	return netip.Addr{}, ErrFull
}

// allocateFrom walks the size addresses from start on, beginning at a
// random one, and reserves the first free address. The walk is bounded by
// the size of the part, which a full /12 or a large IPv6 range makes long:
// for those it tries a bounded number of random addresses instead.
func (a *Allocator) allocateFrom(ctx context.Context, svc *corev1.Service, start netip.Addr, size *big.Int,
	taken map[netip.Addr]bool) (netip.Addr, error) {
	const maxWalk = 1 << 16
	n := size.Int64()
	if !size.IsInt64() || n > maxWalk {
		n = maxWalk
	}
	first := randBig(size)
	for i := int64(0); i < n; i++ {
		off := new(big.Int).Add(first, big.NewInt(i))
		off.Mod(off, size)
		ip := addOffset(start, off)
		if taken[ip] {
			continue
		}
		err := a.create(ctx, svc, ip)
		if errors.Is(err, ErrAllocated) {
			continue // another request took it since we listed
		}
		return ip, err
	}
	return netip.Addr{}, ErrFull
}

func randBig(limit *big.Int) *big.Int {
	if limit.IsInt64() {
		return big.NewInt(rand.Int64N(limit.Int64()))
	}
	n := new(big.Int).SetUint64(rand.Uint64())
	return n.Mod(n, limit)
}

// allocated lists the addresses reserved in the range.
func (a *Allocator) allocated(ctx context.Context) (map[netip.Addr]bool, error) {
	list, err := a.store.GetList(ctx, a.prefix+"/", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	if err != nil {
		return nil, err
	}
	taken := make(map[netip.Addr]bool, len(list.Items))
	for _, item := range list.Items {
		if ip, err := netip.ParseAddr(strings.TrimPrefix(item.Key, a.prefix+"/")); err == nil {
			taken[ip] = true
		}
	}
	return taken, nil
}

// create writes the IPAddress of ip if none exists.
func (a *Allocator) create(ctx context.Context, svc *corev1.Service, ip netip.Addr) error {
	obj := &networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{APIVersion: networkingv1.SchemeGroupVersion.String(), Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              ip.String(),
			UID:               types.UID(uuid.NewString()),
			CreationTimestamp: metav1.Now(),
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(a.family),
				networkingv1.LabelManagedBy:       ManagedBy,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
	err := a.store.Create(ctx, a.key(ip), obj, &networkingv1.IPAddress{}, 0)
	if storage.IsExist(err) {
		return ErrAllocated
	}
	return err
}

// Release frees ip, if the service named by ns and name holds it: a stale
// release never frees an address another service holds since.
func (a *Allocator) Release(ctx context.Context, ns, name string, ip netip.Addr) error {
	if !a.InRange(ip) {
		return nil
	}
	err := a.store.Delete(ctx, a.key(ip), &networkingv1.IPAddress{}, nil, func(_ context.Context, obj runtime.Object) error {
		ref := obj.(*networkingv1.IPAddress).Spec.ParentRef
		if ref == nil || ref.Resource != "services" || ref.Namespace != ns || ref.Name != name {
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
