package networking

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// networkPolicyValidationOptions let an update keep what older servers
// accepted: an invalid label value in the pod selector, CIDRs in forms
// since refused.
type networkPolicyValidationOptions struct {
	allowInvalidLabelValueInSelector bool
	allowCIDRs                       []string
}

var (
	networkPolicyProtocols = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	policyTypes            = []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
)

// validateNetworkPolicy validates np, created (old nil) or updated from
// old.
func validateNetworkPolicy(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	var opts networkPolicyValidationOptions
	var allErrs field.ErrorList
	metaPath := field.NewPath("metadata")
	if old == nil {
		allErrs = corevalidation.ValidateObjectMeta(&np.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metaPath)
	} else {
		allErrs = corevalidation.ValidateObjectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta, metaPath)
		opts.allowInvalidLabelValueInSelector = len(metav1validation.ValidateLabelSelector(&old.Spec.PodSelector,
			metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
		forEachIPBlock(policyRules(&old.Spec), func(block *networkingv1.IPBlock, _ *field.Path) {
			opts.allowCIDRs = append(append(opts.allowCIDRs, block.CIDR), block.Except...)
		})
	}
	allErrs = append(allErrs, validateNetworkPolicySpec(&np.Spec, opts)...)
	return append(allErrs, declarativeNetworkPolicy(np, old)...)
}

func validateNetworkPolicySpec(spec *networkingv1.NetworkPolicySpec, opts networkPolicyValidationOptions) field.ErrorList {
	fldPath := field.NewPath("spec")
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	allErrs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selectorOpts, fldPath.Child("podSelector"))
	for _, rule := range policyRules(spec) {
		for j := range rule.ports {
			allErrs = append(allErrs, validateNetworkPolicyPort(&rule.ports[j], rule.portsPath.Index(j))...)
		}
		for j := range rule.peers {
			allErrs = append(allErrs, validateNetworkPolicyPeer(&rule.peers[j], opts, rule.peersPath.Index(j))...)
		}
	}
	if len(spec.PolicyTypes) > len(policyTypes) {
		return append(allErrs, field.Invalid(fldPath.Child("policyTypes"), &spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if !slices.Contains(policyTypes, string(t)) {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("policyTypes").Index(i), t, policyTypes))
		}
	}
	return allErrs
}

func validateNetworkPolicyPort(port *networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if port.Protocol != nil && !slices.Contains(networkPolicyProtocols, string(*port.Protocol)) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("protocol"), *port.Protocol, networkPolicyProtocols))
	}
	endPort := fldPath.Child("endPort")
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(endPort, *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				allErrs = append(allErrs, field.Invalid(endPort, *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				allErrs = append(allErrs, field.Invalid(endPort, *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			allErrs = append(allErrs, field.Invalid(endPort, *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("port"), port.Port.StrVal, msg))
		}
	}
	return allErrs
}

// validateNetworkPolicyPeer: a peer is pods, namespaces, or an IP block
// alone.
func validateNetworkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, opts networkPolicyValidationOptions, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	selectorOpts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: opts.allowInvalidLabelValueInSelector}
	peers := 0
	if peer.PodSelector != nil {
		peers++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.PodSelector, selectorOpts, fldPath.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		peers++
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selectorOpts, fldPath.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		peers++
		allErrs = append(allErrs, validateIPBlock(peer.IPBlock, opts.allowCIDRs, fldPath.Child("ipBlock"))...)
	}
	switch {
	case peers == 0:
		allErrs = append(allErrs, field.Required(fldPath, "must specify a peer"))
	case peers > 1 && peer.IPBlock != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath, "may not specify both ipBlock and another peer"))
	}
	return allErrs
}

// validateIPBlock checks an IP block's CIDR (that it is set is a
// declarative rule) and that each exception lies strictly within it.
func validateIPBlock(block *networkingv1.IPBlock, allowCIDRs []string, fldPath *field.Path) field.ErrorList {
	if block.CIDR == "" {
		return nil
	}
	allErrs := validation.IsValidCIDRForLegacyField(fldPath.Child("cidr"), block.CIDR, true, allowCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(block.CIDR)
	if err != nil {
		return allErrs // reported above
	}
	cidrBits, _ := cidr.Mask.Size()
	for i, s := range block.Except {
		p := fldPath.Child("except").Index(i)
		allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(p, s, true, allowCIDRs)...)
		_, except, err := netutils.ParseCIDRSloppy(s)
		if err != nil {
			continue
		}
		if exceptBits, _ := except.Mask.Size(); !cidr.Contains(except.IP) || cidrBits >= exceptBits {
			allErrs = append(allErrs, field.Invalid(p, s, "must be a strict subset of `cidr`"))
		}
	}
	return allErrs
}

// declarativeNetworkPolicy is kube 1.37's declarative rule: an IP block's
// CIDR is required. An update checks the rules of a direction again only
// when they changed.
func declarativeNetworkPolicy(np, old *networkingv1.NetworkPolicy) field.ErrorList {
	var allErrs field.ErrorList
	required := func(block *networkingv1.IPBlock, fldPath *field.Path) {
		allErrs = append(allErrs, requiredValue(block.CIDR, fldPath.Child("cidr"))...)
	}
	if old == nil || !apiequality.Semantic.DeepEqual(np.Spec.Ingress, old.Spec.Ingress) {
		forEachIPBlock(ingressRules(&np.Spec), required)
	}
	if old == nil || !apiequality.Semantic.DeepEqual(np.Spec.Egress, old.Spec.Egress) {
		forEachIPBlock(egressRules(&np.Spec), required)
	}
	return allErrs
}
