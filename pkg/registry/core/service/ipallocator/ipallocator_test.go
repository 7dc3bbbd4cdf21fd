package ipallocator_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/ipallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

func service(name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// rawStores are the stores the allocator reads and writes, seen directly.
type rawStores struct {
	ips, cidrs            storage.Interface
	ipPrefix, cidrsPrefix string
}

func newAllocator(t *testing.T, primary string) (*ipallocator.Allocator, rawStores) {
	t.Helper()
	etcd := etcdtest.Start(t)
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/registry"}
	a, release, err := ipallocator.NewFromOptions(netip.MustParsePrefix(primary), getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	raw := func(gr schema.GroupResource, newFunc func() runtime.Object) (storage.Interface, string) {
		opts, _ := getter.GetRESTOptions(gr)
		return etcd3.New(etcd.Client, generic.StorageConfig(gr, opts.ResourcePrefix, newFunc, false)), opts.ResourcePrefix
	}
	var s rawStores
	s.ips, s.ipPrefix = raw(ipallocator.Resource, func() runtime.Object { return &networkingv1.IPAddress{} })
	s.cidrs, s.cidrsPrefix = raw(ipallocator.ServiceCIDRResource, func() runtime.Object { return &networkingv1.ServiceCIDR{} })
	return a, s
}

// addServiceCIDR stores a ServiceCIDR, with a Ready condition of status
// ready ("" for none).
func (s rawStores) addServiceCIDR(t *testing.T, name, cidr string, ready metav1.ConditionStatus) {
	t.Helper()
	sc := &networkingv1.ServiceCIDR{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "ServiceCIDR"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.ServiceCIDRSpec{CIDRs: []string{cidr}},
	}
	if ready != "" {
		sc.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: ready}}
	}
	if err := s.cidrs.Create(context.Background(), s.cidrsPrefix+"/"+name, sc, &networkingv1.ServiceCIDR{}, 0); err != nil {
		t.Fatal(err)
	}
}

// TestAllocator: addresses are reserved once, as IPAddress objects naming
// their service under the prefix of ipaddresses.networking.k8s.io, with
// kube-apiserver's managed fields; a small range fills up; only the
// holder's release frees an address.
func TestAllocator(t *testing.T) {
	a, s := newAllocator(t, "10.1.0.0/29")
	s.addServiceCIDR(t, "kubernetes", "10.1.0.0/29", "")
	ctx := context.Background()

	ip := netip.MustParseAddr("10.1.0.3")
	if err := a.Allocate(ctx, service("a"), ip); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, service("b"), ip); !errors.Is(err, ipallocator.ErrAllocated) {
		t.Errorf("allocating a taken address: %v, want ErrAllocated", err)
	}
	for _, addr := range []string{"10.1.0.0", "10.1.0.7", "10.2.0.1"} {
		if err := a.Allocate(ctx, service("b"), netip.MustParseAddr(addr)); !errors.Is(err, ipallocator.ErrMismatchedNetwork) {
			t.Errorf("allocating %s: %v, want ErrMismatchedNetwork", addr, err)
		}
	}

	stored := &networkingv1.IPAddress{}
	if err := s.ips.Get(ctx, s.ipPrefix+"/10.1.0.3", storage.GetOptions{}, stored); err != nil {
		t.Fatalf("the IPAddress of 10.1.0.3: %v", err)
	}
	if ref := stored.Spec.ParentRef; ref == nil || ref.Resource != "services" || ref.Namespace != "ns" || ref.Name != "a" ||
		stored.Labels[networkingv1.LabelManagedBy] != ipallocator.ManagedBy || stored.Labels[networkingv1.LabelIPAddressFamily] != "IPv4" {
		t.Errorf("IPAddress of 10.1.0.3: parent %+v, labels %v", stored.Spec.ParentRef, stored.Labels)
	}
	if mf := stored.ManagedFields; len(mf) != 1 || mf[0].Manager != "kube-apiserver" || mf[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managed fields: %+v", mf)
	}

	// .1 to .6 are usable: five more.
	seen := map[netip.Addr]bool{ip: true}
	for i := range 5 {
		got, err := a.AllocateNext(ctx, service("next"))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[got] || got.Compare(netip.MustParseAddr("10.1.0.1")) < 0 || got.Compare(netip.MustParseAddr("10.1.0.6")) > 0 {
			t.Fatalf("allocation %d: %s, taken or out of range", i, got)
		}
		seen[got] = true
	}
	if _, err := a.AllocateNext(ctx, service("next")); !errors.Is(err, ipallocator.ErrFull) {
		t.Errorf("allocating from a full range: %v, want ErrFull", err)
	}

	if err := a.Release(ctx, "ns", "b", ip); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, service("b"), ip); !errors.Is(err, ipallocator.ErrAllocated) {
		t.Errorf("after a release by another service: %v, want ErrAllocated (still held)", err)
	}
	if err := a.Release(ctx, "ns", "a", ip); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, service("b"), ip); err != nil {
		t.Errorf("after its holder released it: %v", err)
	}
}

// TestAllocatorServiceCIDRs: addresses come from every ready ServiceCIDR
// of the cluster's family, none without one; dry runs say so as kube.
func TestAllocatorServiceCIDRs(t *testing.T) {
	a, s := newAllocator(t, "10.1.0.0/30")
	ctx := context.Background()

	if _, err := a.AllocateNext(ctx, service("a")); !errors.Is(err, ipallocator.ErrFull) {
		t.Errorf("no ServiceCIDR: %v, want ErrFull", err)
	}
	if err := a.CheckRange(ctx, netip.MustParseAddr("10.1.0.1")); !errors.Is(err, ipallocator.ErrNotReady) {
		t.Errorf("dry run without a ServiceCIDR: %v, want ErrNotReady", err)
	}

	s.addServiceCIDR(t, "kubernetes", "10.1.0.0/30", "True")
	s.addServiceCIDR(t, "not-ready", "10.3.0.0/24", "False")
	s.addServiceCIDR(t, "other-family", "fd00::/64", "")
	s.addServiceCIDR(t, "z-extra", "10.2.0.0/30", "")
	// .1 and .2 of each /30: the default's first, then z-extra's.
	want := []string{"10.1.0.", "10.1.0.", "10.2.0.", "10.2.0."}
	for i, prefix := range want {
		got, err := a.AllocateNext(ctx, service("next"))
		if err != nil || got.String()[:len(prefix)] != prefix {
			t.Fatalf("allocation %d: %v %v, want an address of %sx", i, got, err, prefix)
		}
	}
	if err := a.Allocate(ctx, service("a"), netip.MustParseAddr("10.3.0.5")); !errors.Is(err, ipallocator.ErrMismatchedNetwork) {
		t.Errorf("allocating from a range not ready: %v, want ErrMismatchedNetwork", err)
	}
	if err := a.CheckRange(ctx, netip.MustParseAddr("10.2.0.1")); err != nil {
		t.Errorf("dry run in z-extra: %v", err)
	}
	err := a.CheckRange(ctx, netip.MustParseAddr("10.9.0.1"))
	if want := "the provided IP (10.9.0.1) is not in the valid range. The range of valid IPs is 10.1.0.0/30"; err == nil || err.Error() != want {
		t.Errorf("dry run out of range: %v, want %q", err, want)
	}
	if ip, err := a.DryRunNext(ctx); err != nil || ip.String() != "10.1.0.0" {
		t.Errorf("dry run of a dynamic allocation: %v %v, want 10.1.0.0", ip, err)
	}
}
