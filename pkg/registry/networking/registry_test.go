package networking_test

import (
	"hash/fnv"
	"net/netip"
	"testing"
	"time"

	"go.uber.org/goleak"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/networking"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// ipOf is the IPv6 address an IPAddress the suite calls name is named
// by: an IPAddress is named by its address. An address is kept.
func ipOf(name string) string {
	if _, err := netip.ParseAddr(name); err == nil {
		return name
	}
	h := fnv.New128a()
	h.Write([]byte(name))
	var a [16]byte
	copy(a[:], h.Sum(nil))
	a[0], a[1] = 0xfd, 0x00
	return netip.AddrFrom16(a).String()
}

var transition = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func backend(port int32) *networkingv1.IngressBackend {
	return &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
		Name: "svc", Port: networkingv1.ServiceBackendPort{Number: port}}}
}

// TestRegistry runs the registry's conformance suite on the group's
// kinds, with their status subresources.
func TestRegistry(t *testing.T) {
	t.Parallel()
	registrytest.RunGroup(t, networking.RESTStorageProvider{}, []registrytest.Case{
		{Resource: "ingresses", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, port int32) runtime.Object {
				return &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: networkingv1.IngressSpec{DefaultBackend: backend(port)}}
			}
			port := func(obj runtime.Object) *int32 {
				return &obj.(*networkingv1.Ingress).Spec.DefaultBackend.Service.Port.Number
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, 80) },
				Invalid:                  func(name string) runtime.Object { return valid(name, 0) },
				Change:                   func(obj runtime.Object) { *port(obj) = 81 },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage:    registrytest.StatusStorage(t, info, "ingresses"),
					ChangeSpec: func(obj runtime.Object) { *port(obj) = 82 },
					ChangeStatus: func(obj runtime.Object) {
						obj.(*networkingv1.Ingress).Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
					},
				},
			}
		}},
		{Resource: "ingressclasses", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name, controller string) runtime.Object {
				return &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: networkingv1.IngressClassSpec{Controller: controller}}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, "example.com/ingress") },
				Invalid:                  func(name string) runtime.Object { return valid(name, "not a controller!") },
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "networkpolicies", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, app string) runtime.Object {
				return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
			}
			return registrytest.Tester{
				Valid:   func(name string) runtime.Object { return valid(name, "x") },
				Invalid: func(name string) runtime.Object { return valid(name, "not a label value!") },
				Change: func(obj runtime.Object) {
					obj.(*networkingv1.NetworkPolicy).Spec.PodSelector.MatchLabels["app"] = "y"
				},
				AllowUnconditionalUpdate: true,
			}
		}},
		{Resource: "ipaddresses", Tester: func(*testing.T, rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, resource string) runtime.Object {
				return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: ipOf(name)},
					Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
						Resource: resource, Namespace: "default", Name: "svc"}}}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, "services") },
				Invalid:                  func(name string) runtime.Object { return valid(name, "") },
				AllowUnconditionalUpdate: true,
				NoGenerateName:           true,
			}
		}},
		{Resource: "servicecidrs", Tester: func(t *testing.T, info rest.APIGroupInfo) registrytest.Tester {
			valid := func(name string, cidr string) runtime.Object {
				return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{cidr}}}
			}
			return registrytest.Tester{
				Valid:                    func(name string) runtime.Object { return valid(name, "10.96.0.0/16") },
				Invalid:                  func(name string) runtime.Object { return valid(name, "10.96.0.0/99") },
				AllowUnconditionalUpdate: true,
				Status: &registrytest.StatusCheck{
					Storage: registrytest.StatusStorage(t, info, "servicecidrs"),
					ChangeStatus: func(obj runtime.Object) {
						obj.(*networkingv1.ServiceCIDR).Status.Conditions = []metav1.Condition{{Type: "Ready",
							Status: metav1.ConditionTrue, Reason: "Registrytest", LastTransitionTime: transition}}
					},
				},
			}
		}},
	})
}
