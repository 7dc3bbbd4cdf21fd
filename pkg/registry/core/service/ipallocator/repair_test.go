package ipallocator_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/ipallocator"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// TestRepair: an address reserved for a service that was never written
// (a crash between the reservation and the write) is released once its
// grace period is over, never before; an address its service holds is
// never released; a service's address whose IPAddress is missing is
// reserved again for it.
func TestRepair(t *testing.T) {
	a, s := newAllocator(t, "10.1.0.0/29")
	s.addServiceCIDR(t, "kubernetes", "10.1.0.0/29", "")
	ctx := context.Background()

	held := service("held")
	held.Spec.ClusterIPs = []string{"10.1.0.2"}
	lost := service("lost") // its IPAddress was deleted by hand
	lost.Spec.ClusterIPs = []string{"10.1.0.4"}
	for name, ip := range map[string]string{"never-written": "10.1.0.1", "held": "10.1.0.2"} {
		if err := a.Allocate(ctx, service(name), netip.MustParseAddr(ip)); err != nil {
			t.Fatal(err)
		}
	}
	services := func(context.Context) ([]corev1.Service, error) { return []corev1.Service{*held, *lost}, nil }

	reserved := func(ip string) *networkingv1.ParentReference {
		t.Helper()
		obj := &networkingv1.IPAddress{}
		err := s.ips.Get(ctx, s.ipPrefix+"/"+ip, storage.GetOptions{IgnoreNotFound: true}, obj)
		if err != nil {
			t.Fatal(err)
		}
		return obj.Spec.ParentRef
	}

	// Within the grace period (a create may be under way): kept.
	if err := a.Repair(ctx, services, time.Now().Add(50*time.Second)); err != nil {
		t.Fatal(err)
	}
	if ref := reserved("10.1.0.1"); ref == nil || ref.Name != "never-written" {
		t.Fatalf("10.1.0.1 within the grace period: %+v, want it still reserved", ref)
	}
	if ref := reserved("10.1.0.4"); ref == nil || ref.Name != "lost" {
		t.Errorf("10.1.0.4, held by a service, unreserved: %+v after a repair, want it reserved for the service", ref)
	}

	// After it: released; what services hold stays.
	if err := a.Repair(ctx, services, time.Now().Add(61*time.Second)); err != nil {
		t.Fatal(err)
	}
	if ref := reserved("10.1.0.1"); ref != nil {
		t.Errorf("10.1.0.1, reserved for a service never written: still reserved for %+v after the grace period", ref)
	}
	for ip, name := range map[string]string{"10.1.0.2": "held", "10.1.0.4": "lost"} {
		if ref := reserved(ip); ref == nil || ref.Name != name {
			t.Errorf("%s, held by service %s: %+v after a repair, want it kept", ip, name, ref)
		}
	}
	// A service updated to hold another address: the old one is released
	// (it is older than the service), the new one kept.
	held.Spec.ClusterIPs = []string{"10.1.0.5"}
	held.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
	if err := a.Allocate(ctx, held, netip.MustParseAddr("10.1.0.5")); err != nil {
		t.Fatal(err)
	}
	if err := a.Repair(ctx, services, time.Now().Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if ref := reserved("10.1.0.2"); ref != nil {
		t.Errorf("10.1.0.2, no longer held by its service: still reserved")
	}
	if ref := reserved("10.1.0.5"); ref == nil || ref.Name != "held" {
		t.Errorf("10.1.0.5, held by its service: %+v", ref)
	}
}

// TestRepairOneFamily: on a dual-stack cluster each family's allocator
// repairs its own addresses only: the IPv4 one leaves a leaked IPv6
// address to the IPv6 one.
func TestRepairOneFamily(t *testing.T) {
	v4, s := newAllocator(t, "10.1.0.0/29")
	s.addServiceCIDR(t, "kubernetes", "10.1.0.0/29", "")
	s.addServiceCIDR(t, "v6", "fd00::/120", "")
	v6, err := ipallocator.New(netip.MustParsePrefix("fd00::/120"), s.ips, s.ipPrefix, s.cidrs, s.cidrsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := v6.Allocate(ctx, service("never-written"), netip.MustParseAddr("fd00::1")); err != nil {
		t.Fatal(err)
	}
	none := func(context.Context) ([]corev1.Service, error) { return nil, nil }
	exists := func() bool {
		t.Helper()
		obj := &networkingv1.IPAddress{}
		if err := s.ips.Get(ctx, s.ipPrefix+"/fd00::1", storage.GetOptions{IgnoreNotFound: true}, obj); err != nil {
			t.Fatal(err)
		}
		return obj.Name != ""
	}
	later := time.Now().Add(2 * time.Minute)
	if err := v4.Repair(ctx, none, later); err != nil {
		t.Fatal(err)
	}
	if !exists() {
		t.Fatal("the IPv4 allocator's repair released an IPv6 address")
	}
	if err := v6.Repair(ctx, none, later); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Fatal("the IPv6 allocator's repair kept its leaked address")
	}
}
