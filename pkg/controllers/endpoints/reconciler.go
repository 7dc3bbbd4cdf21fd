// Package endpoints keeps the endpoints of the kubernetes Service, and
// their EndpointSlice, listing the live replicas of the API server, as
// kube-apiserver's lease endpoint reconciler does
// (--endpoint-reconciler-type=lease): each replica holds a
// Lease in kube-system, renewed well within its duration, and writes the
// addresses of the replicas whose leases have not expired. A replica
// stopped gracefully deletes its lease and takes its address out. With a
// count (NewCounted), it follows kube's master-count reconciler instead
// (count.go).
//
// kube keeps these leases as bare etcd keys with a TTL (/masterleases/);
// here they are coordination.k8s.io Leases named apiserver-<id> (as kube's
// identity leases are), so an operator sees them with kubectl.
package endpoints

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// The lease's marks: kube's identity label, and the address the replica
// advertises (a Lease has no field for it).
const (
	IdentityLabel     = "apiserver.kubernetes.io/identity"
	identity          = "kube-apiserver"
	AddressAnnotation = "apiserver.miniapiserver.io/advertise-address"
	leasePrefix       = "apiserver-"
	serviceName       = "kubernetes"
)

// Leases is the leases' store.
type Leases interface {
	rest.Getter
	rest.Lister
	rest.Updater
	rest.GracefulDeleter
}

// Endpoints is the endpoints' store.
type Endpoints interface {
	rest.Getter
	rest.Updater
}

// Config of a reconciler.
type Config struct {
	// ID names this replica's lease (apiserver-<ID>).
	ID string
	// Address and Port are where clients reach this replica.
	Address netip.Addr
	Port    int32
	// TTL is the lease duration (kube's: 15 s); the lease is renewed and
	// the endpoints reconciled every Interval (kube's: 10 s).
	TTL, Interval time.Duration
}

// ValidAddress reports whether a can be an endpoint's address (kube's
// rules: not unspecified, loopback, link-local or multicast).
func ValidAddress(a netip.Addr) bool {
	return a.IsValid() && !a.IsUnspecified() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsLinkLocalMulticast() && !a.IsMulticast()
}

// Reconciler keeps this replica's lease, the kubernetes endpoints and
// their EndpointSlice.
type Reconciler struct {
	cfg       Config
	leases    Leases // nil with a count
	endpoints Endpoints
	slices    EndpointSlices
	now       func() time.Time
	// count, when positive, is kube's --apiserver-count: the master-count
	// reconciler's number of replicas, which needs no lease.
	count int
}

// New returns a reconciler over the stores of leases, endpoints and
// endpoint slices.
func New(cfg Config, leases Leases, endpoints Endpoints, slices EndpointSlices) *Reconciler {
	return &Reconciler{cfg: cfg, leases: leases, endpoints: endpoints, slices: slices, now: time.Now}
}

// Run reconciles every interval until ctx ends, then removes this
// replica: its lease, and its address from the endpoints.
func (r *Reconciler) Run(ctx context.Context) {
	ticker := time.NewTicker(r.cfg.Interval)
	defer ticker.Stop()
	for {
		if err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("reconciling the kubernetes endpoints", "err", err)
		}
		select {
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := r.Remove(stop); err != nil {
				slog.Warn("removing this replica from the kubernetes endpoints", "err", err)
			}
			return
		case <-ticker.C:
		}
	}
}

// Reconcile renews this replica's lease and writes the endpoints of the
// replicas whose leases are live.
func (r *Reconciler) Reconcile(ctx context.Context) error {
	if r.count > 0 {
		return r.writeEndpoints(ctx, r.countedAddresses)
	}
	if err := r.renew(ctx); err != nil {
		return err
	}
	live, err := r.liveAddresses(ctx)
	if err != nil {
		return err
	}
	return r.writeEndpoints(ctx, func(*corev1.Endpoints) []string { return live })
}

// Remove deletes this replica's lease and writes the endpoints without it.
func (r *Reconciler) Remove(ctx context.Context) error {
	if r.count > 0 {
		return r.writeEndpoints(ctx, r.addressesWithoutThis)
	}
	ctx = request.WithNamespace(ctx, metav1.NamespaceSystem)
	if _, _, err := r.leases.Delete(ctx, r.leaseName(), nil, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	live, err := r.liveAddresses(ctx)
	if err != nil {
		return err
	}
	live = slices.DeleteFunc(live, func(a string) bool { return a == r.cfg.Address.String() })
	return r.writeEndpoints(ctx, func(*corev1.Endpoints) []string { return live })
}

func (r *Reconciler) leaseName() string { return leasePrefix + r.cfg.ID }

func (r *Reconciler) renew(ctx context.Context) error {
	ctx = request.WithNamespace(ctx, metav1.NamespaceSystem)
	now := metav1.NewMicroTime(r.now())
	seconds := int32(r.cfg.TTL / time.Second)
	holder := r.leaseName()
	_, _, err := r.leases.Update(ctx, r.leaseName(), updateFunc(func(old runtime.Object) (runtime.Object, error) {
		lease := old.(*coordinationv1.Lease).DeepCopy()
		lease.Name, lease.Namespace = r.leaseName(), metav1.NamespaceSystem
		lease.Labels = map[string]string{IdentityLabel: identity}
		lease.Annotations = map[string]string{AddressAnnotation: r.cfg.Address.String()}
		lease.Spec.HolderIdentity = &holder
		lease.Spec.LeaseDurationSeconds = &seconds
		if lease.Spec.AcquireTime == nil {
			lease.Spec.AcquireTime = &now
		}
		lease.Spec.RenewTime = &now
		return lease, nil
	}), nil, nil, true, &metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("renewing lease %s: %w", r.leaseName(), err)
	}
	return nil
}

// liveAddresses are the sorted, distinct addresses of the replicas whose
// leases have not expired.
func (r *Reconciler) liveAddresses(ctx context.Context) ([]string, error) {
	ctx = request.WithNamespace(ctx, metav1.NamespaceSystem)
	list, err := r.leases.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing leases: %w", err)
	}
	var live []string
	for _, item := range list.Items {
		var lease coordinationv1.Lease
		if err := item.Decode(&lease); err != nil {
			return nil, err
		}
		addr, ok := lease.Annotations[AddressAnnotation]
		if !strings.HasPrefix(lease.Name, leasePrefix) || lease.Labels[IdentityLabel] != identity || !ok || expired(&lease, r.now()) {
			continue
		}
		live = append(live, addr)
	}
	slices.Sort(live)
	return slices.Compact(live), nil
}

func expired(lease *coordinationv1.Lease, now time.Time) bool {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return true
	}
	return now.After(lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second))
}

// writeEndpoints sets default/kubernetes to the addresses that
// addressesOf returns (given the stored endpoints, as they are at the
// write: empty when there are none) on this replica's port, writing only
// when that changes it, and then its EndpointSlice (every time, as kube's
// reconciler ensures it even when the endpoints are right: another
// replica may have written them, or the slice may have been deleted).
func (r *Reconciler) writeEndpoints(ctx context.Context, addressesOf func(*corev1.Endpoints) []string) error {
	ctx = request.WithNamespace(ctx, metav1.NamespaceDefault)
	var want []corev1.EndpointSubset
	_, _, err := r.endpoints.Update(ctx, serviceName, updateFunc(func(old runtime.Object) (runtime.Object, error) {
		ep := old.(*corev1.Endpoints)
		want = r.subsets(addressesOf(ep))
		if ep.Name != "" && equalSubsets(ep.Subsets, want) {
			return ep, nil
		}
		ep = ep.DeepCopy()
		ep.Name, ep.Namespace = serviceName, metav1.NamespaceDefault
		// kube's reconciler skips the EndpointSlice mirroring controller:
		// it writes the slice itself.
		ep.Labels = map[string]string{"endpointslice.kubernetes.io/skip-mirror": "true"}
		ep.Subsets = want
		return ep, nil
	}), nil, nil, true, &metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("writing the endpoints of the kubernetes service: %w", err)
	}
	return r.writeEndpointSlice(ctx, want)
}

// subsets lists addresses on this replica's port.
func (r *Reconciler) subsets(addresses []string) []corev1.EndpointSubset {
	want := []corev1.EndpointSubset{}
	if len(addresses) > 0 {
		subset := corev1.EndpointSubset{Ports: r.ports()}
		for _, a := range addresses {
			subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: a})
		}
		want = append(want, subset)
	}
	return want
}

func (r *Reconciler) ports() []corev1.EndpointPort {
	return []corev1.EndpointPort{{Name: "https", Port: r.cfg.Port, Protocol: corev1.ProtocolTCP}}
}

func equalSubsets(a, b []corev1.EndpointSubset) bool {
	return len(a) == len(b) && (len(a) == 0 || (slices.Equal(a[0].Addresses, b[0].Addresses) && slices.Equal(a[0].Ports, b[0].Ports)))
}

// updateFunc is an UpdatedObjectInfo computing the new object from the
// stored one, without preconditions.
type updateFunc func(old runtime.Object) (runtime.Object, error)

func (updateFunc) Preconditions() *metav1.Preconditions { return nil }

func (f updateFunc) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	return f(old)
}
