package networking

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func port(p intstr.IntOrString) networkingv1.NetworkPolicyPort {
	return networkingv1.NetworkPolicyPort{Port: &p}
}

func ipBlock(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

// TestNetworkPolicy: kube's defaults (policyTypes from the rules, TCP
// ports), generation on spec changes, warnings on IPv6 CIDRs not written
// canonically, and the table.
func TestNetworkPolicy(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	client, w := warningClientset(t)
	policies := client.NetworkingV1().NetworkPolicies(ns)
	ctx := context.Background()

	np, err := policies.Create(ctx, &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "egress"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{ipBlock("2001:DB8::/64", "2001:DB8::/96")}}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{port(intstr.FromInt32(53)), {Port: ptr.To(intstr.FromString("dns")), Protocol: ptr.To(corev1.ProtocolUDP)}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) ||
		*np.Spec.Egress[0].Ports[0].Protocol != corev1.ProtocolTCP || *np.Spec.Egress[0].Ports[1].Protocol != corev1.ProtocolUDP || np.Generation != 1 {
		t.Errorf("defaults: %+v, generation %d", np.Spec, np.Generation)
	}
	if got := w.take(); !slices.Equal(got, []string{
		`spec.ingress[0].from[0].ipBlock.cidr: IPv6 CIDR value "2001:DB8::/64" should be in RFC 5952 canonical format ("2001:db8::/64")`,
		`spec.ingress[0].from[0].ipBlock.except[0]: IPv6 CIDR value "2001:DB8::/96" should be in RFC 5952 canonical format ("2001:db8::/96")`,
	}) {
		t.Errorf("warnings %q", got)
	}

	ingressOnly, err := policies.Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "none"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ingressOnly.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("policyTypes %v", ingressOnly.Spec.PolicyTypes)
	}
	ingressOnly.Labels = map[string]string{"a": "b"}
	if same, err := policies.Update(ctx, ingressOnly, metav1.UpdateOptions{}); err != nil || same.Generation != 1 {
		t.Errorf("metadata update: generation %d, %v", same.Generation, err)
	}
	ingressOnly, _ = policies.Get(ctx, "none", metav1.GetOptions{})
	ingressOnly.Spec.PodSelector.MatchLabels = map[string]string{"x": "y"}
	if changed, err := policies.Update(ctx, ingressOnly, metav1.UpdateOptions{}); err != nil || changed.Generation != 2 {
		t.Errorf("spec update: generation %d, %v", changed.Generation, err)
	}

	_, rows := table(t, srv, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies")
	if len(rows) != 2 || fmt.Sprint(rows[0][:2], rows[1][:2]) != "[egress app=a] [none x=y]" {
		t.Errorf("rows %v", rows)
	}
}

// TestNetworkPolicyValidation: bad policies get kube's causes, the
// required CIDR of an IP block (a declarative rule) last.
func TestNetworkPolicyValidation(t *testing.T) {
	t.Parallel()
	policies := clientset(t).NetworkingV1().NetworkPolicies(srv.CreateNamespace(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		spec networkingv1.NetworkPolicySpec
		want []string
	}{
		{"ports", networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{
			{Protocol: ptr.To(corev1.Protocol("ICMP"))}, port(intstr.FromInt32(0)), {Port: ptr.To(intstr.FromInt32(100)), EndPort: ptr.To[int32](50)},
			{Port: ptr.To(intstr.FromString("http")), EndPort: ptr.To[int32](90)}, {EndPort: ptr.To[int32](90)}, port(intstr.FromString("a_b")),
		}}}}, []string{
			`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`,
			"spec.ingress[0].ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
			"spec.ingress[0].ports[2].endPort: Invalid value: 50: must be greater than or equal to `port`",
			"spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
			"spec.ingress[0].ports[4].endPort: Invalid value: 90: may not be specified when `port` is not specified",
			`spec.ingress[0].ports[5].port: Invalid value: "a_b": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`,
		}},
		{"peers", networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
			{}, {IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{}}, ipBlock(""), ipBlock("10.0.0.1/8"),
			ipBlock("10.0.0.0/8", "11.0.0.0/16", "10.0.0.0/8"),
		}}}, Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{ipBlock("")}}}}, []string{
			"spec.ingress[0].from[0]: Required value: must specify a peer",
			"spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
			`spec.ingress[0].from[3].ipBlock.cidr: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length`,
			"spec.ingress[0].from[4].ipBlock.except[0]: Invalid value: \"11.0.0.0/16\": must be a strict subset of `cidr`",
			"spec.ingress[0].from[4].ipBlock.except[1]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
			"spec.ingress[0].from[2].ipBlock.cidr: Required value",
			"spec.egress[0].to[0].ipBlock.cidr: Required value",
		}},
		{"policy types", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Ingress", "Egress", "Ingress"}},
			[]string{`spec.policyTypes: Invalid value: ["Ingress","Egress","Ingress"]: may not specify more than two policyTypes`}},
		{"policy type", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{"Bogus"}},
			[]string{`spec.policyTypes[0]: Unsupported value: "Bogus": supported values: "Ingress", "Egress"`}},
		{"selector", networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}},
			[]string{`spec.podSelector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policies.Create(ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: tc.spec}, metav1.CreateOptions{})
			wantInvalid(t, err, "NetworkPolicy", tc.want...)
		})
	}
}
