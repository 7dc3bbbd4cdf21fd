package networking

import (
	"context"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	discoveryv1apply "k8s.io/client-go/applyconfigurations/discovery/v1"
	metav1apply "k8s.io/client-go/applyconfigurations/meta/v1"
	networkingv1apply "k8s.io/client-go/applyconfigurations/networking/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestServerSideApply: the kinds apply as kube's: managers own what they
// apply (status through /status), conflicts need force, and applied
// objects get the kinds' defaults.
func TestServerSideApply(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client := clientset(t)
	ctx := context.Background()
	ingresses := client.NetworkingV1().Ingresses(ns)

	rule := networkingv1apply.IngressRule().WithHost("a.example.com").WithHTTP(networkingv1apply.HTTPIngressRuleValue().WithPaths(
		networkingv1apply.HTTPIngressPath().WithPath("/").WithPathType(networkingv1.PathTypePrefix).WithBackend(
			networkingv1apply.IngressBackend().WithService(networkingv1apply.IngressServiceBackend().WithName("web").
				WithPort(networkingv1apply.ServiceBackendPort().WithNumber(80))))))
	ing, err := ingresses.Apply(ctx, networkingv1apply.Ingress("web", ns).WithSpec(networkingv1apply.IngressSpec().
		WithIngressClassName("nginx").WithRules(rule)), metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	ing, err = ingresses.ApplyStatus(ctx, networkingv1apply.Ingress("web", ns).WithStatus(networkingv1apply.IngressStatus().
		WithLoadBalancer(networkingv1apply.IngressLoadBalancerStatus().WithIngress(networkingv1apply.IngressLoadBalancerIngress().WithIP("10.0.0.1")))),
		metav1.ApplyOptions{FieldManager: "lb-controller", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := managers(ing); !slices.Equal(got, []string{"deployer Apply", "lb-controller Apply status"}) || ing.Status.LoadBalancer.Ingress[0].IP != "10.0.0.1" {
		t.Errorf("managers %v, status %+v", got, ing.Status)
	}
	_, err = ingresses.Apply(ctx, networkingv1apply.Ingress("web", ns).WithSpec(networkingv1apply.IngressSpec().WithIngressClassName("other")),
		metav1.ApplyOptions{FieldManager: "other"})
	if !apierrors.IsConflict(err) || err.Error() != `Apply failed with 1 conflict: conflict with "deployer": .spec.ingressClassName` {
		t.Errorf("conflicting apply: %v", err)
	}

	np, err := client.NetworkingV1().NetworkPolicies(ns).Apply(ctx, networkingv1apply.NetworkPolicy("dns", ns).WithSpec(
		networkingv1apply.NetworkPolicySpec().WithEgress(networkingv1apply.NetworkPolicyEgressRule().WithPorts(
			networkingv1apply.NetworkPolicyPort().WithPort(intstr.FromInt32(53))))), metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(np.Spec.PolicyTypes) != 2 || *np.Spec.Egress[0].Ports[0].Protocol != "TCP" {
		t.Errorf("applied policy not defaulted: %+v", np.Spec)
	}

	eps, err := client.DiscoveryV1().EndpointSlices(ns).Apply(ctx, discoveryv1apply.EndpointSlice("web", ns).WithAddressType("IPv4").
		WithEndpoints(discoveryv1apply.Endpoint().WithAddresses("10.1.0.1")).WithPorts(discoveryv1apply.EndpointPort().WithPort(80)),
		metav1.ApplyOptions{FieldManager: "deployer"})
	if err != nil || *eps.Ports[0].Protocol != "TCP" || !slices.Equal(managers(eps), []string{"deployer Apply"}) {
		t.Errorf("applied slice: %+v, %v", eps, err)
	}

	name := testserver.NamespaceName(t)
	cidrs := client.NetworkingV1().ServiceCIDRs()
	if _, err := cidrs.Apply(ctx, networkingv1apply.ServiceCIDR(name).WithSpec(networkingv1apply.ServiceCIDRSpec().WithCIDRs("10.210.0.0/24")),
		metav1.ApplyOptions{FieldManager: "admin"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cidrs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	sc, err := cidrs.ApplyStatus(ctx, networkingv1apply.ServiceCIDR(name).WithStatus(networkingv1apply.ServiceCIDRStatus().WithConditions(
		metav1apply.Condition().WithType("Ready").WithStatus(metav1.ConditionTrue).WithReason("Checked").WithMessage("ok").WithLastTransitionTime(metav1.Now()))),
		metav1.ApplyOptions{FieldManager: "servicecidr-controller", Force: true})
	if err != nil || len(sc.Status.Conditions) != 1 || !slices.Equal(managers(sc), []string{"admin Apply", "servicecidr-controller Apply status"}) {
		t.Errorf("applied status: %+v, managers %v, %v", sc.Status, managers(sc), err)
	}
}
