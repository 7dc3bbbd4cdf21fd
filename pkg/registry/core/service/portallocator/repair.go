package portallocator

import (
	"context"
	"errors"
	"log/slog"
	"math/big"

	corev1 "k8s.io/api/core/v1"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// repairsBeforeRelease is kube's: a port reserved by no service is
// released by the third repair in a row that finds it so, which leaves a
// create under way (reserved, not yet written) time to write its service.
const repairsBeforeRelease = 3

// Repair reclaims the node ports reserved by no service (a server that
// crashed between a reservation and the write of its service leaked
// them) and reserves again those a service holds that the bitmap lost,
// following the rules of kube's node port repair controller.
type Repair struct {
	alloc *Allocator
	// leaks counts down, per port reserved by no service, the repairs
	// left before it is released.
	leaks map[int]int
}

// NewRepair returns the repair of a's bitmap.
func NewRepair(a *Allocator) *Repair { return &Repair{alloc: a, leaks: map[int]int{}} }

// errChanged ends a repair whose bitmap changed since it was read.
var errChanged = errors.New("the node port bitmap changed during the repair")

// RunOnce repairs the bitmap against services, the list of every service
// read after the bitmap is (a port reserved since is not in the snapshot
// repaired). The bitmap is written only if it did not change since: a
// change makes the repair start again, at most a few times.
func (r *Repair) RunOnce(ctx context.Context, services func(context.Context) ([]corev1.Service, error)) error {
	var err error
	for range 5 {
		if err = r.runOnce(ctx, services); !errors.Is(err, errChanged) {
			return err
		}
	}
	return err
}

func (r *Repair) runOnce(ctx context.Context, services func(context.Context) ([]corev1.Service, error)) error {
	p := r.alloc
	snapshot := &corev1.RangeAllocation{}
	if err := p.store.Get(ctx, p.key, storage.GetOptions{IgnoreNotFound: true}, snapshot); err != nil {
		return err
	}
	stored := p.bitmap(snapshot)
	list, err := services(ctx)
	if err != nil {
		return err
	}
	rebuilt := new(big.Int)
	for i := range list {
		svc := &list[i]
		for _, port := range serviceNodePorts(svc) {
			switch {
			case !p.contains(port):
				slog.Warn("node port repair: a service's port is outside the range; please recreate the service", "port", port, "range", p.ports.String(), "service", svc.Namespace+"/"+svc.Name)
			case rebuilt.Bit(port-p.ports.Base) == 1:
				slog.Warn("node port repair: a port was assigned to several services; please recreate the service", "port", port, "service", svc.Namespace+"/"+svc.Name)
			default:
				if stored.Bit(port-p.ports.Base) == 0 {
					slog.Warn("node port repair: a service's port is not reserved; repairing", "port", port, "service", svc.Namespace+"/"+svc.Name)
				}
				rebuilt.SetBit(rebuilt, port-p.ports.Base, 1)
				delete(r.leaks, port) // in use: not leaked
			}
		}
	}
	for bit := range stored.BitLen() {
		port := p.ports.Base + bit
		if stored.Bit(bit) == 0 || rebuilt.Bit(bit) == 1 {
			continue
		}
		left, seen := r.leaks[port]
		if !seen {
			left = repairsBeforeRelease - 1
		}
		if left > 0 {
			r.leaks[port] = left - 1
			rebuilt.SetBit(rebuilt, bit, 1)
			continue
		}
		delete(r.leaks, port)
		slog.Warn("node port repair: a port reserved by no service has leaked; releasing it", "port", port)
	}
	if rebuilt.Cmp(stored) == 0 {
		return nil
	}
	return p.write(ctx, snapshot.ResourceVersion, rebuilt)
}

// write stores bits as the bitmap if it is still at resourceVersion.
func (p *Allocator) write(ctx context.Context, resourceVersion string, bits *big.Int) error {
	return p.updateStored(ctx, func(stored *corev1.RangeAllocation, current *big.Int) error {
		if stored.ResourceVersion != resourceVersion {
			return errChanged
		}
		current.Set(bits)
		return nil
	})
}

// serviceNodePorts are the node ports svc holds, each once per protocol
// it is held for (a port held twice for one protocol is a conflict the
// repair reports), and its health check node port, as kube collects them.
func serviceNodePorts(svc *corev1.Service) []int {
	var ports []int
	protocols := map[int]map[corev1.Protocol]bool{}
	for _, sp := range svc.Spec.Ports {
		port := int(sp.NodePort)
		if port == 0 {
			continue
		}
		seen := protocols[port]
		switch {
		case seen == nil:
			protocols[port] = map[corev1.Protocol]bool{sp.Protocol: true}
			ports = append(ports, port)
		case seen[sp.Protocol]:
			ports = append(ports, port)
		default:
			seen[sp.Protocol] = true
		}
	}
	if hc := int(svc.Spec.HealthCheckNodePort); hc != 0 {
		if seen := protocols[hc]; seen == nil || seen[corev1.ProtocolTCP] {
			ports = append(ports, hc)
		}
	}
	return ports
}
