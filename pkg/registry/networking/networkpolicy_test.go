package networking

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestNetworkPolicyDefaults(t *testing.T) {
	np := &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
		Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{}, {Protocol: ptr.To(corev1.ProtocolUDP)}}}},
		Egress:  []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(53))}}}},
	}}
	networkPolicyStrategy{}.Default(np)
	if got := np.Spec.PolicyTypes; len(got) != 2 || got[0] != networkingv1.PolicyTypeIngress || got[1] != networkingv1.PolicyTypeEgress {
		t.Errorf("policyTypes %v, want [Ingress Egress]", got)
	}
	ports := append(np.Spec.Ingress[0].Ports, np.Spec.Egress[0].Ports...)
	for i, want := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolTCP} {
		if *ports[i].Protocol != want {
			t.Errorf("port %d: protocol %s, want %s", i, *ports[i].Protocol, want)
		}
	}

	egressOnly := &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}}
	networkPolicyStrategy{}.Default(egressOnly)
	if got := egressOnly.Spec.PolicyTypes; len(got) != 1 || got[0] != networkingv1.PolicyTypeEgress {
		t.Errorf("policyTypes given are kept: %v", got)
	}
}

func policyWith(selector metav1.LabelSelector, cidrs ...string) *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "ns", ResourceVersion: "1"},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: selector}}
	for _, c := range cidrs {
		np.Spec.Ingress = append(np.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{
			From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: c}}},
		})
	}
	return np
}

// TestNetworkPolicyUpdateKeepsOldValues: an update may keep an invalid
// value in the old pod selector's expressions and CIDRs in forms since refused,
// and the declarative rule (an IP block's CIDR is required) is checked
// again only on rules that changed, after the handwritten ones.
func TestNetworkPolicyUpdateKeepsOldValues(t *testing.T) {
	ctx := context.Background()
	s := networkPolicyStrategy{}
	badSelector := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "a", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value"}},
	}}
	old := policyWith(badSelector, "10.0.0.1/8", "")
	if got := causes(s.Validate(ctx, old)); got == "" {
		t.Fatal("create accepted an invalid selector and CIDR")
	}
	if got := causes(s.ValidateUpdate(ctx, policyWith(badSelector, "10.0.0.1/8", ""), old)); got != "" {
		t.Errorf("update keeping the old values: %s", got)
	}
	want := `spec.ingress[1].from[0].ipBlock.cidr: Invalid value: "10.0.0.2/8": must not have bits set beyond the prefix length
spec.ingress[2].from[0].ipBlock.cidr: Required value`
	if got := causes(s.ValidateUpdate(ctx, policyWith(badSelector, "10.0.0.1/8", "10.0.0.2/8", ""), old)); got != want {
		t.Errorf("update changing the rules:\n%s\nwant:\n%s", got, want)
	}
}
