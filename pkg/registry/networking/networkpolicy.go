package networking

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var networkPolicies = generic.Resource{
	Name: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy", Namespaced: true,
	ShortNames: []string{"netpol"},
	New:        generic.NewOf[networkingv1.NetworkPolicy], NewList: generic.NewOf[networkingv1.NetworkPolicyList],
	Strategy: networkPolicyStrategy{generic.GenerationStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}},
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		func(np *networkingv1.NetworkPolicy) interface{} {
			return metav1.FormatLabelSelector(&np.Spec.PodSelector)
		}),
}

type networkPolicyStrategy struct{ generic.GenerationStrategy }

var _ rest.Defaulter = networkPolicyStrategy{}

// Default implements rest.Defaulter: a policy without policyTypes is an
// Ingress policy, and an Egress one too when it has egress rules; ports
// are TCP.
func (networkPolicyStrategy) Default(obj runtime.Object) {
	spec := &obj.(*networkingv1.NetworkPolicy).Spec
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) != 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	defaultProtocols := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
			}
		}
	}
	for i := range spec.Ingress {
		defaultProtocols(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		defaultProtocols(spec.Egress[i].Ports)
	}
}

func (networkPolicyStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateNetworkPolicy(obj.(*networkingv1.NetworkPolicy), nil)
}

func (networkPolicyStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateNetworkPolicy(obj.(*networkingv1.NetworkPolicy), old.(*networkingv1.NetworkPolicy))
}

func (networkPolicyStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return networkPolicyWarnings(obj.(*networkingv1.NetworkPolicy))
}

func (networkPolicyStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return networkPolicyWarnings(obj.(*networkingv1.NetworkPolicy))
}

// networkPolicyWarnings warns of IP blocks written in a non-standard form.
func networkPolicyWarnings(np *networkingv1.NetworkPolicy) []string {
	var warnings []string
	forEachIPBlock(policyRules(&np.Spec), func(block *networkingv1.IPBlock, fldPath *field.Path) {
		warnings = append(warnings, validation.GetWarningsForCIDR(fldPath.Child("cidr"), block.CIDR)...)
		for k, except := range block.Except {
			warnings = append(warnings, validation.GetWarningsForCIDR(fldPath.Child("except").Index(k), except)...)
		}
	})
	return warnings
}

// policyRule is an ingress or egress rule of a policy: its ports, and its
// peers (from, or to), with their paths.
type policyRule struct {
	ports                []networkingv1.NetworkPolicyPort
	peers                []networkingv1.NetworkPolicyPeer
	portsPath, peersPath *field.Path
}

// policyRules returns the ingress rules of spec, then its egress rules.
func policyRules(spec *networkingv1.NetworkPolicySpec) []policyRule {
	return append(ingressRules(spec), egressRules(spec)...)
}

func ingressRules(spec *networkingv1.NetworkPolicySpec) []policyRule {
	var rules []policyRule
	for i, r := range spec.Ingress {
		p := field.NewPath("spec", "ingress").Index(i)
		rules = append(rules, policyRule{ports: r.Ports, peers: r.From, portsPath: p.Child("ports"), peersPath: p.Child("from")})
	}
	return rules
}

func egressRules(spec *networkingv1.NetworkPolicySpec) []policyRule {
	var rules []policyRule
	for i, r := range spec.Egress {
		p := field.NewPath("spec", "egress").Index(i)
		rules = append(rules, policyRule{ports: r.Ports, peers: r.To, portsPath: p.Child("ports"), peersPath: p.Child("to")})
	}
	return rules
}

// forEachIPBlock calls fn with every IP block of the rules' peers, and
// its path.
func forEachIPBlock(rules []policyRule, fn func(block *networkingv1.IPBlock, fldPath *field.Path)) {
	for _, r := range rules {
		for j := range r.peers {
			if block := r.peers[j].IPBlock; block != nil {
				fn(block, r.peersPath.Index(j).Child("ipBlock"))
			}
		}
	}
}
