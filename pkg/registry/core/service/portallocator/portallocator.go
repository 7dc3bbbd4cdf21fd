// Package portallocator hands out the node ports of services, as kube
// does: one bitmap of the ports taken, kept in etcd as a RangeAllocation.
// It sits in the registry, below the services' storage
// (pkg/registry/core), which calls it from its hooks.
package portallocator

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"path"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The errors of kube's port allocator, with their messages.
var (
	ErrFull      = errors.New("range is full")
	ErrAllocated = errors.New("provided port is already allocated")
)

// Resource names the allocator's store among the server's resources
// (--watch-cache-sizes, kube's storage of the node port bitmap); no API
// serves it.
var Resource = schema.GroupResource{Resource: "servicenodeportallocations"}

// Allocator hands out node ports as kube does: one RangeAllocation
// object at <prefix>/ranges/servicenodeports holds a bitmap of the ports
// taken (bit i is port base+i), and every change is a compare-and-swap on
// it, so concurrent requests and replicas never hand out a port twice.
// Dynamic allocation prefers the upper part of the range, starting at a
// random port; the lower part (min(max(16, size/32), 128) ports) is mostly
// left to clients that ask for a specific port.
type Allocator struct {
	store       storage.Interface
	key         string
	ports       net.PortRange
	rangeOffset int
}

// NewFromOptions builds the allocator of ports over a raw store (no watch
// cache: allocations read and write etcd), its bitmap where kube keeps it:
// <prefix>/ranges/servicenodeports, beside the prefix getter gives
// Resource. release frees the store.
func NewFromOptions(ports net.PortRange, getter generic.RESTOptionsGetter) (a *Allocator, release func(), err error) {
	opts, err := getter.GetRESTOptions(Resource)
	if err != nil {
		return nil, nil, err
	}
	key := path.Dir(opts.ResourcePrefix) + "/ranges/servicenodeports"
	cfg := generic.StorageConfig(Resource, path.Dir(key), func() runtime.Object { return &corev1.RangeAllocation{} }, false)
	store, destroy, err := opts.StorageFactory(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the store of service node ports: %w", err)
	}
	return New(ports, store, key), destroy, nil
}

// New returns the allocator of ports, whose bitmap store keeps at key.
func New(ports net.PortRange, store storage.Interface, key string) *Allocator {
	offset := 0
	if ports.Size > 16 {
		offset = min(max(16, ports.Size/32), 128)
	}
	return &Allocator{store: store, key: key, ports: ports, rangeOffset: offset}
}

// NotInRangeError refuses a port outside the range.
type NotInRangeError struct{ valid string }

func (e NotInRangeError) Error() string {
	return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", e.valid)
}

func (p *Allocator) contains(port int) bool {
	return port >= p.ports.Base && port < p.ports.Base+p.ports.Size
}

// Allocate reserves port.
func (p *Allocator) Allocate(ctx context.Context, port int) error {
	if !p.contains(port) {
		return NotInRangeError{p.ports.String()}
	}
	return p.update(ctx, func(bits *big.Int) error {
		if bits.Bit(port-p.ports.Base) == 1 {
			return ErrAllocated
		}
		bits.SetBit(bits, port-p.ports.Base, 1)
		return nil
	})
}

// AllocateNext reserves a free port.
func (p *Allocator) AllocateNext(ctx context.Context) (int, error) {
	var port int
	err := p.update(ctx, func(bits *big.Int) error {
		for _, part := range [][2]int{{p.rangeOffset, p.ports.Size}, {0, p.rangeOffset}} {
			lo, hi := part[0], part[1]
			if hi <= lo {
				continue
			}
			start := rand.IntN(hi - lo)
			for i := 0; i < hi-lo; i++ {
				bit := lo + (start+i)%(hi-lo)
				if bits.Bit(bit) == 0 {
					bits.SetBit(bits, bit, 1)
					port = p.ports.Base + bit
					return nil
				}
			}
		}
		return ErrFull
	})
	return port, err
}

// Has reports whether port is taken (for dry runs).
func (p *Allocator) Has(ctx context.Context, port int) (bool, error) {
	ra := &corev1.RangeAllocation{}
	if err := p.store.Get(ctx, p.key, storage.GetOptions{IgnoreNotFound: true}, ra); err != nil {
		return false, err
	}
	return p.contains(port) && p.bitmap(ra).Bit(port-p.ports.Base) == 1, nil
}

// Release frees ports; ports outside the range are ignored.
func (p *Allocator) Release(ctx context.Context, ports ...int) error {
	var inRange []int
	for _, port := range ports {
		if p.contains(port) {
			inRange = append(inRange, port)
		}
	}
	if len(inRange) == 0 {
		return nil
	}
	return p.update(ctx, func(bits *big.Int) error {
		for _, port := range inRange {
			bits.SetBit(bits, port-p.ports.Base, 0)
		}
		return nil
	})
}

// update applies change to the bitmap, retrying on races.
func (p *Allocator) update(ctx context.Context, change func(bits *big.Int) error) error {
	return p.updateStored(ctx, func(_ *corev1.RangeAllocation, bits *big.Int) error { return change(bits) })
}

// updateStored applies change to the bitmap, given the object it is read
// from, retrying on races.
func (p *Allocator) updateStored(ctx context.Context, change func(stored *corev1.RangeAllocation, bits *big.Int) error) error {
	return p.store.GuaranteedUpdate(ctx, p.key, &corev1.RangeAllocation{}, true, nil,
		func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			ra := input.(*corev1.RangeAllocation)
			bits := p.bitmap(ra)
			if err := change(ra, bits); err != nil {
				return nil, nil, err
			}
			out := &corev1.RangeAllocation{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "RangeAllocation"},
				ObjectMeta: metav1.ObjectMeta{CreationTimestamp: ra.CreationTimestamp},
				Range:      p.ports.String(),
				Data:       bits.Bytes(),
			}
			if out.CreationTimestamp.IsZero() {
				out.CreationTimestamp = metav1.Now()
			}
			return out, nil, nil
		}, nil)
}

// bitmap reads the ports ra holds as a bitmap of this range. A bitmap
// written for another range (the flag changed) is translated: its ports
// outside this range are forgotten.
func (p *Allocator) bitmap(ra *corev1.RangeAllocation) *big.Int {
	stored := new(big.Int).SetBytes(ra.Data)
	if ra.Range == "" || ra.Range == p.ports.String() {
		return stored
	}
	old, err := net.ParsePortRange(ra.Range)
	if err != nil {
		return new(big.Int)
	}
	bits := new(big.Int)
	for i := 0; i < stored.BitLen(); i++ {
		if port := old.Base + i; stored.Bit(i) == 1 && p.contains(port) {
			bits.SetBit(bits, port-p.ports.Base, 1)
		}
	}
	return bits
}
