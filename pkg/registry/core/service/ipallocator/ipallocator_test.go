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

// TestAllocator: addresses are reserved once, as IPAddress objects naming
// their service under the prefix of ipaddresses.networking.k8s.io; a
// small range fills up; only the holder's release frees an address.
func TestAllocator(t *testing.T) {
	etcd := etcdtest.Start(t)
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/registry"}
	a, release, err := ipallocator.NewFromOptions(netip.MustParsePrefix("10.1.0.0/29"), getter)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx := context.Background()

	ip := netip.MustParseAddr("10.1.0.3")
	if err := a.Allocate(ctx, service("a"), ip); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, service("b"), ip); !errors.Is(err, ipallocator.ErrAllocated) {
		t.Errorf("allocating a taken address: %v, want ErrAllocated", err)
	}
	for _, s := range []string{"10.1.0.0", "10.1.0.7", "10.2.0.1"} {
		if err := a.Allocate(ctx, service("b"), netip.MustParseAddr(s)); !errors.Is(err, ipallocator.ErrMismatchedNetwork) {
			t.Errorf("allocating %s: %v, want ErrMismatchedNetwork", s, err)
		}
	}

	opts, _ := getter.GetRESTOptions(ipallocator.Resource)
	raw := etcd3.New(etcd.Client, generic.StorageConfig(ipallocator.Resource, opts.ResourcePrefix, nil, false))
	stored := &networkingv1.IPAddress{}
	if err := raw.Get(ctx, opts.ResourcePrefix+"/10.1.0.3", storage.GetOptions{}, stored); err != nil {
		t.Fatalf("the IPAddress of 10.1.0.3: %v", err)
	}
	if ref := stored.Spec.ParentRef; ref == nil || ref.Resource != "services" || ref.Namespace != "ns" || ref.Name != "a" ||
		stored.Labels[networkingv1.LabelManagedBy] != ipallocator.ManagedBy {
		t.Errorf("IPAddress of 10.1.0.3: parent %+v, labels %v", stored.Spec.ParentRef, stored.Labels)
	}

	// .1 to .6 are usable: five more.
	seen := map[netip.Addr]bool{ip: true}
	for i := range 5 {
		got, err := a.AllocateNext(ctx, service("next"))
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[got] || !a.InRange(got) {
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
