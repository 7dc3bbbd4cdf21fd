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
	New:        func() runtime.Object { return &networkingv1.NetworkPolicy{} },
	NewList:    func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
	Strategy:   networkPolicyStrategy{generic.BaseStrategy{Namespaced: true}},
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			np := obj.(*networkingv1.NetworkPolicy)
			return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), generic.TranslateTimestampSince(np.CreationTimestamp)}, nil
		},
	},
}

type networkPolicyStrategy struct{ generic.BaseStrategy }

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

func (networkPolicyStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
}

func (networkPolicyStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.BumpGenerationOnSpecChange(obj, old)
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
	forEachIPBlock(&np.Spec, func(block *networkingv1.IPBlock, fldPath *field.Path) {
		warnings = append(warnings, validation.GetWarningsForCIDR(fldPath.Child("cidr"), block.CIDR)...)
		for k, except := range block.Except {
			warnings = append(warnings, validation.GetWarningsForCIDR(fldPath.Child("except").Index(k), except)...)
		}
	})
	return warnings
}

// forEachIPBlock calls fn with every IP block of the ingress rules' peers,
// then of the egress rules', and its path.
func forEachIPBlock(spec *networkingv1.NetworkPolicySpec, fn func(block *networkingv1.IPBlock, fldPath *field.Path)) {
	ingressIPBlocks(spec, fn)
	egressIPBlocks(spec, fn)
}

func ingressIPBlocks(spec *networkingv1.NetworkPolicySpec, fn func(block *networkingv1.IPBlock, fldPath *field.Path)) {
	p := field.NewPath("spec", "ingress")
	for i, rule := range spec.Ingress {
		for j, peer := range rule.From {
			if peer.IPBlock != nil {
				fn(peer.IPBlock, p.Index(i).Child("from").Index(j).Child("ipBlock"))
			}
		}
	}
}

func egressIPBlocks(spec *networkingv1.NetworkPolicySpec, fn func(block *networkingv1.IPBlock, fldPath *field.Path)) {
	p := field.NewPath("spec", "egress")
	for i, rule := range spec.Egress {
		for j, peer := range rule.To {
			if peer.IPBlock != nil {
				fn(peer.IPBlock, p.Index(i).Child("to").Index(j).Child("ipBlock"))
			}
		}
	}
}
