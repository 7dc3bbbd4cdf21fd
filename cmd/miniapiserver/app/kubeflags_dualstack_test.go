package app_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestDualStackServiceRanges: with two CIDRs in --service-cluster-ip-range
// the cluster is dual-stack, as kube's: services are single-stack of the
// first family unless they ask, PreferDualStack and RequireDualStack get
// an address of each family (the family named first), a policy change
// adds or frees the secondary address, and the default ServiceCIDR holds
// both ranges.
func TestDualStackServiceRanges(t *testing.T) {
	v4, v6 := netip.MustParsePrefix("10.96.0.0/16"), netip.MustParsePrefix("fd00:10:96::/112")
	ts := startWithFlags(t, "--service-cluster-ip-range="+v4.String()+","+v6.String())
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ctx := context.Background()
	services := client.CoreV1().Services("default")
	svc := func(name string, policy corev1.IPFamilyPolicy, families ...corev1.IPFamily) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}, IPFamilies: families}}
		if policy != "" {
			s.Spec.IPFamilyPolicy = &policy
		}
		return s
	}
	tests := []struct {
		name         string
		svc          *corev1.Service
		wantFamilies []corev1.IPFamily
	}{
		{"default: single-stack, primary family", svc("plain", ""), []corev1.IPFamily{corev1.IPv4Protocol}},
		{"single-stack of the secondary family", svc("v6", corev1.IPFamilyPolicySingleStack, corev1.IPv6Protocol), []corev1.IPFamily{corev1.IPv6Protocol}},
		{"PreferDualStack", svc("prefer", corev1.IPFamilyPolicyPreferDualStack), []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}},
		{"RequireDualStack, IPv6 first", svc("require", corev1.IPFamilyPolicyRequireDualStack, corev1.IPv6Protocol),
			[]corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := services.Create(ctx, tc.svc, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Spec.IPFamilies, tc.wantFamilies) {
				t.Fatalf("ipFamilies %v, want %v", got.Spec.IPFamilies, tc.wantFamilies)
			}
			checkClusterIPs(t, got, v4, v6)
		})
	}

	t.Run("upgrade to dual-stack and back", func(t *testing.T) { testDualStackUpgrade(t, client, v4, v6) })

	t.Run("defaults", func(t *testing.T) {
		cidr, err := client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{v4.String(), v6.String()}; !slices.Equal(cidr.Spec.CIDRs, want) {
			t.Errorf("default ServiceCIDR %v, want %v", cidr.Spec.CIDRs, want)
		}
		k, err := services.Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(k.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
			t.Errorf("the kubernetes service's families %v, want the primary only (kube's)", k.Spec.IPFamilies)
		}
	})
}

// testDualStackUpgrade: the service "plain" upgraded to RequireDualStack
// gets an address of each family; back to SingleStack, it releases the
// secondary one.
func testDualStackUpgrade(t *testing.T, client kubernetes.Interface, v4, v6 netip.Prefix) {
	ctx := context.Background()
	services := client.CoreV1().Services("default")
	got, err := services.Get(ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	if got, err = services.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.ClusterIPs) != 2 {
		t.Fatalf("clusterIPs %v after the upgrade, want two", got.Spec.ClusterIPs)
	}
	checkClusterIPs(t, got, v4, v6)
	secondary := got.Spec.ClusterIPs[1]
	if _, err := client.NetworkingV1().IPAddresses().Get(ctx, secondary, metav1.GetOptions{}); err != nil {
		t.Fatalf("the secondary address's IPAddress: %v", err)
	}
	got.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicySingleStack)
	if got, err = services.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.ClusterIPs) != 1 || len(got.Spec.IPFamilies) != 1 {
		t.Fatalf("clusterIPs %v, ipFamilies %v after the downgrade, want one of each", got.Spec.ClusterIPs, got.Spec.IPFamilies)
	}
	if _, err := client.NetworkingV1().IPAddresses().Get(ctx, secondary, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the secondary address's IPAddress after the downgrade: %v, want NotFound", err)
	}
}

// TestSingleStackRefusesDualStack: on a single-stack cluster,
// RequireDualStack is kube's Invalid, PreferDualStack gets one family.
func TestSingleStackRefusesDualStack(t *testing.T) {
	ts := startWithFlags(t, "--service-cluster-ip-range=10.96.0.0/16")
	services := kubernetes.NewForConfigOrDie(ts.ClientConfig).CoreV1().Services("default")
	ctx := context.Background()
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "require"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Port: 80}}, IPFamilyPolicy: ptr.To(corev1.IPFamilyPolicyRequireDualStack)}}
	if _, err := services.Create(ctx, s, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("RequireDualStack: %v, want Invalid", err)
	}
	s.Name, s.Spec.IPFamilyPolicy = "prefer", ptr.To(corev1.IPFamilyPolicyPreferDualStack)
	got, err := services.Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.ClusterIPs) != 1 {
		t.Errorf("PreferDualStack: clusterIPs %v, want one", got.Spec.ClusterIPs)
	}
}

// checkClusterIPs: one address per family, each in its family's range,
// clusterIP the first.
func checkClusterIPs(t *testing.T, svc *corev1.Service, v4, v6 netip.Prefix) {
	t.Helper()
	if len(svc.Spec.ClusterIPs) != len(svc.Spec.IPFamilies) || svc.Spec.ClusterIP != svc.Spec.ClusterIPs[0] {
		t.Fatalf("clusterIP %s, clusterIPs %v for families %v", svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies)
	}
	for i, s := range svc.Spec.ClusterIPs {
		ip := netip.MustParseAddr(s)
		want := v4
		if svc.Spec.IPFamilies[i] == corev1.IPv6Protocol {
			want = v6
		}
		if !want.Contains(ip) {
			t.Errorf("clusterIPs[%d] = %s, want one of %s", i, ip, want)
		}
	}
}
