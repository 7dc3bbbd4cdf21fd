package core

import (
	"fmt"
	"net"
	"slices"
	"strings"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation of services, as kube's pkg/apis/core/validation has it.

var (
	supportedSessionAffinities = sets.New(corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone)
	supportedServiceTypes      = sets.New(corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName)
	supportedInternalTrafficPolicies = sets.New(corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal)
	supportedExternalTrafficPolicies = sets.New(corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal)
	supportedIPFamilies              = sets.New(corev1.IPv4Protocol, corev1.IPv6Protocol)
	supportedIPFamilyPolicies        = sets.New(corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack,
		corev1.IPFamilyPolicyRequireDualStack)
	supportedLoadBalancerIPModes  = sets.New(corev1.LoadBalancerIPModeVIP, corev1.LoadBalancerIPModeProxy)
	supportedTrafficDistributions = []string{corev1.ServiceTrafficDistributionPreferClose,
		corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}
)

// maxClientIPServiceAffinitySeconds bounds sessionAffinityConfig's timeout
// (a day).
const maxClientIPServiceAffinitySeconds int32 = 86400

// validateServiceCreate: service names are DNS labels (kube 1.37 relaxed
// them from DNS-1035: they may start with a digit).
func validateServiceCreate(svc *corev1.Service) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&svc.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(allErrs, validateService(svc, nil)...)
}

func validateServiceUpdate(svc, old *corev1.Service) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&svc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateUpgradeDowngradeClusterIPs(old, svc)...)
	allErrs = append(allErrs, validateUpgradeDowngradeIPFamilies(old, svc)...)
	allErrs = append(allErrs, validateLoadBalancerClass(old, svc)...)
	if needsHealthCheck(old) && needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != old.Spec.HealthCheckNodePort {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("spec", "healthCheckNodePort"), "field is immutable"))
	}
	return append(allErrs, validateService(svc, old)...)
}

// isHeadlessService is validation's notion: exactly ["None"].
func isHeadlessService(svc *corev1.Service) bool {
	return len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

func validateService(svc, old *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	spec, specPath := &svc.Spec, field.NewPath("spec")
	hints, hintsSet := svc.Annotations[corev1.DeprecatedAnnotationTopologyAwareHints]
	mode, modeSet := svc.Annotations[corev1.AnnotationTopologyMode]
	if hintsSet && modeSet && hints != mode {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "annotations").Key(corev1.AnnotationTopologyMode), mode,
			fmt.Sprintf("must match annotations[%s] when both are specified", corev1.DeprecatedAnnotationTopologyAwareHints)))
	}
	headless := isHeadlessService(svc)
	if len(spec.Ports) == 0 && !headless && spec.Type != corev1.ServiceTypeExternalName {
		allErrs = append(allErrs, field.Required(specPath.Child("ports"), ""))
	}
	allErrs = append(allErrs, validateServiceTypeFields(svc, headless)...)
	names := sets.New[string]()
	for i := range spec.Ports {
		allErrs = append(allErrs, validateServicePort(&spec.Ports[i], len(spec.Ports) > 1, names, specPath.Child("ports").Index(i))...)
	}
	if spec.Selector != nil {
		allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	allErrs = append(allErrs, validateSessionAffinity(spec, specPath)...)
	allErrs = append(allErrs, validateServiceClusterIPsRelatedFields(svc, old)...)
	var oldExternalIPs []string
	if old != nil {
		oldExternalIPs = old.Spec.ExternalIPs
	}
	for i, ip := range spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if errs := validation.IsValidIPForLegacyField(p, ip, true, oldExternalIPs); len(errs) != 0 {
			allErrs = append(allErrs, errs...)
		} else {
			allErrs = append(allErrs, corevalidation.ValidateEndpointIP(ip, p)...)
		}
	}
	switch {
	case spec.Type == "":
		allErrs = append(allErrs, field.Required(specPath.Child("type"), ""))
	case !supportedServiceTypes.Has(spec.Type):
		allErrs = append(allErrs, field.NotSupported(specPath.Child("type"), spec.Type, sets.List(supportedServiceTypes)))
	}
	allErrs = append(allErrs, validateServiceNodePorts(svc)...)
	allErrs = append(allErrs, validateLoadBalancerSourceRanges(svc, old)...)
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		allErrs = append(allErrs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	allErrs = append(allErrs, validateLoadBalancerClass(nil, svc)...)
	allErrs = append(allErrs, validateTrafficPolicies(svc)...)
	if td := spec.TrafficDistribution; td != nil && !slices.Contains(supportedTrafficDistributions, *td) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("trafficDistribution"), *td, supportedTrafficDistributions))
	}
	return allErrs
}

// validateServiceTypeFields checks what each type requires or forbids.
func validateServiceTypeFields(svc *corev1.Service, headless bool) field.ErrorList {
	var allErrs field.ErrorList
	spec, specPath := &svc.Spec, field.NewPath("spec")
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if headless {
			allErrs = append(allErrs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0],
				fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot marks the name fully qualified.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			allErrs = append(allErrs, field.Required(specPath.Child("externalName"), ""))
		}
	}
	return allErrs
}

func validateServicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && sp.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if sp.Name != "" {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(sp.Name, fldPath.Child("name"))...)
		if names.Has(sp.Name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	allErrs = append(allErrs, corevalidation.ValidatePortNum(sp.Port, fldPath.Child("port"))...)
	allErrs = append(allErrs, corevalidation.ValidateProtocol(sp.Protocol, fldPath.Child("protocol"))...)
	allErrs = append(allErrs, corevalidation.ValidatePortNumOrName(sp.TargetPort, fldPath.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(*sp.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

func validateSessionAffinity(spec *corev1.ServiceSpec, specPath *field.Path) field.ErrorList {
	p := specPath.Child("sessionAffinity")
	switch {
	case spec.SessionAffinity == "":
		return field.ErrorList{field.Required(p, "")}
	case !supportedSessionAffinities.Has(spec.SessionAffinity):
		return field.ErrorList{field.NotSupported(p, spec.SessionAffinity, sets.List(supportedSessionAffinities))}
	case spec.SessionAffinity == corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			return field.ErrorList{field.Forbidden(specPath.Child("sessionAffinityConfig"),
				fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone))}
		}
		return nil
	}
	cfgPath := specPath.Child("sessionAffinityConfig")
	msg := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	cfg := spec.SessionAffinityConfig
	switch {
	case cfg == nil:
		return field.ErrorList{field.Required(cfgPath, msg)}
	case cfg.ClientIP == nil:
		return field.ErrorList{field.Required(cfgPath.Child("clientIP"), msg)}
	case cfg.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(cfgPath.Child("clientIP", "timeoutSeconds"), msg)}
	}
	if t := cfg.ClientIP.TimeoutSeconds; *t <= 0 || *t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(cfgPath.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

// validateServiceNodePorts: no node port on ClusterIP services, and none
// twice for a protocol; no port twice for a protocol.
func validateServiceNodePorts(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	portsPath := field.NewPath("spec", "ports")
	type key struct {
		protocol corev1.Protocol
		port     int32
	}
	nodePorts, ports := map[key]bool{}, map[key]bool{}
	for i, sp := range svc.Spec.Ports {
		p := portsPath.Index(i)
		if svc.Spec.Type == corev1.ServiceTypeClusterIP && sp.NodePort != 0 {
			allErrs = append(allErrs, field.Forbidden(p.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		if sp.NodePort != 0 {
			if nodePorts[key{sp.Protocol, sp.NodePort}] {
				allErrs = append(allErrs, field.Duplicate(p.Child("nodePort"), sp.NodePort))
			}
			nodePorts[key{sp.Protocol, sp.NodePort}] = true
		}
		if ports[key{sp.Protocol, sp.Port}] {
			// kube shows its internal ServicePort here.
			allErrs = append(allErrs, field.Duplicate(p, corevalidation.InternalValue(corev1.ServicePort{Protocol: sp.Protocol, Port: sp.Port})))
		}
		ports[key{sp.Protocol, sp.Port}] = true
	}
	return allErrs
}

func validateLoadBalancerSourceRanges(svc, old *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	isLB := svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if len(svc.Spec.LoadBalancerSourceRanges) > 0 {
		p := field.NewPath("spec", "LoadBalancerSourceRanges")
		if !isLB {
			allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		var existing []string
		if old != nil {
			for _, v := range old.Spec.LoadBalancerSourceRanges {
				existing = append(existing, strings.TrimSpace(v))
			}
		}
		for i, v := range svc.Spec.LoadBalancerSourceRanges {
			allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(p.Index(i), strings.TrimSpace(v), true, existing)...)
		}
		return allErrs
	}
	val, set := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]
	if !set {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
	if !isLB {
		allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	if old == nil || old.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey] != val {
		if val = strings.TrimSpace(val); val != "" {
			for _, v := range strings.Split(val, ",") {
				allErrs = append(allErrs, validation.IsValidCIDRForLegacyField(p, strings.TrimSpace(v), true, nil)...)
			}
		}
	}
	return allErrs
}

func validateLoadBalancerClass(old, svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	p := field.NewPath("spec", "loadBalancerClass")
	isLB := func(s *corev1.Service) bool { return s.Spec.Type == corev1.ServiceTypeLoadBalancer }
	if old != nil && isLB(old) && isLB(svc) && !equalStringPtrs(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
		allErrs = append(allErrs, field.Invalid(p, svc.Spec.LoadBalancerClass, "may not change once set"))
	}
	switch {
	case isLB(svc) && svc.Spec.LoadBalancerClass != nil:
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(*svc.Spec.LoadBalancerClass, p)...)
	case !isLB(svc) && svc.Spec.LoadBalancerClass != nil:
		allErrs = append(allErrs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
	}
	return allErrs
}

// validateTrafficPolicies checks externalTrafficPolicy (and the health
// check node port that goes with Local) and internalTrafficPolicy.
func validateTrafficPolicies(svc *corev1.Service) field.ErrorList {
	var allErrs field.ErrorList
	spec, specPath := &svc.Spec, field.NewPath("spec")
	if !externallyAccessible(svc) {
		if spec.ExternalTrafficPolicy != "" {
			allErrs = append(allErrs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy,
				"may only be set for externally-accessible services"))
		}
	} else if spec.ExternalTrafficPolicy == "" {
		allErrs = append(allErrs, field.Required(specPath.Child("externalTrafficPolicy"), ""))
	} else if !supportedExternalTrafficPolicies.Has(spec.ExternalTrafficPolicy) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy,
			sets.List(supportedExternalTrafficPolicies)))
	}
	hcPath := specPath.Child("healthCheckNodePort")
	if !needsHealthCheck(svc) {
		if spec.HealthCheckNodePort != 0 {
			allErrs = append(allErrs, field.Invalid(hcPath, spec.HealthCheckNodePort,
				"may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if spec.HealthCheckNodePort == 0 {
		allErrs = append(allErrs, field.Required(hcPath, ""))
	} else {
		allErrs = append(allErrs, corevalidation.ValidatePortNum(spec.HealthCheckNodePort, hcPath)...)
	}
	itpPath := specPath.Child("internalTrafficPolicy")
	switch {
	case spec.InternalTrafficPolicy == nil:
		if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP {
			allErrs = append(allErrs, field.Required(itpPath, ""))
		}
	case !supportedInternalTrafficPolicies.Has(*spec.InternalTrafficPolicy):
		allErrs = append(allErrs, field.NotSupported(itpPath, *spec.InternalTrafficPolicy, sets.List(supportedInternalTrafficPolicies)))
	}
	return allErrs
}

// validateServiceClusterIPsRelatedFields checks clusterIP, clusterIPs,
// ipFamilies and ipFamilyPolicy together.
func validateServiceClusterIPsRelatedFields(svc, old *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil // checked with the type
	}
	var allErrs field.ErrorList
	spec, specPath := &svc.Spec, field.NewPath("spec")
	ipsPath, familiesPath := specPath.Child("clusterIPs"), specPath.Child("ipFamilies")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, fam := range spec.IPFamilies {
		if !supportedIPFamilies.Has(fam) {
			allErrs = append(allErrs, field.NotSupported(familiesPath.Index(i), fam, sets.List(supportedIPFamilies)))
		}
		if seen.Has(fam) {
			allErrs = append(allErrs, field.Duplicate(familiesPath.Index(i), fam))
		}
		seen.Insert(fam)
	}
	if p := spec.IPFamilyPolicy; p != nil && !supportedIPFamilyPolicies.Has(*p) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("ipFamilyPolicy"), p, sets.List(supportedIPFamilyPolicies)))
	}
	var oldIPs []string
	if old != nil {
		oldIPs = old.Spec.ClusterIPs
	}
	invalidIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalidIPs = true
				allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		errs := validation.IsValidIPForLegacyField(ipsPath.Index(i), ip, true, oldIPs)
		invalidIPs = invalidIPs || len(errs) != 0
		allErrs = append(allErrs, errs...)
	}
	if len(spec.ClusterIPs) > 2 {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	// Further checks would only repeat a bad address.
	if invalidIPs {
		return allErrs
	}
	if len(spec.ClusterIPs) > 1 && !corevalidation.IsDualStack(spec.ClusterIPs, corevalidation.IPIsIPv6) {
		allErrs = append(allErrs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !isHeadlessService(svc) && len(spec.ClusterIPs) > 0 {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			v6 := net.ParseIP(ip).To4() == nil
			switch {
			case spec.IPFamilies[i] == corev1.IPv4Protocol && v6:
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			case spec.IPFamilies[i] == corev1.IPv6Protocol && !v6:
				allErrs = append(allErrs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return allErrs
}

// validateUpgradeDowngradeClusterIPs: the primary cluster IP never
// changes once set; dropping the secondary needs SingleStack.
func validateUpgradeDowngradeClusterIPs(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(old) && isHeadlessService(svc) {
		return nil
	}
	var allErrs field.ErrorList
	oldIPs, ips := old.Spec.ClusterIPs, svc.Spec.ClusterIPs
	p := field.NewPath("spec", "clusterIPs")
	switch {
	case len(oldIPs) == len(ips):
		for i, ip := range oldIPs {
			if ip != ips[i] {
				allErrs = append(allErrs, field.Invalid(p.Index(i), ips, "may not change once set"))
			}
		}
	case len(oldIPs) > len(ips):
		if len(ips) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Index(0), ips, "primary clusterIP can not be unset"))
		}
		if len(oldIPs) > 0 && len(ips) > 0 && ips[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), ips, "may not change once set"))
		}
		if len(ips) == 1 && policyOf(svc) != corev1.IPFamilyPolicySingleStack {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && ips[0] != oldIPs[0] {
			allErrs = append(allErrs, field.Invalid(p.Index(0), ips, "may not change once set"))
		}
	}
	return allErrs
}

// validateUpgradeDowngradeIPFamilies: the primary family never changes.
func validateUpgradeDowngradeIPFamilies(old, svc *corev1.Service) field.ErrorList {
	if svc.Spec.Type == corev1.ServiceTypeExternalName || old.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if isHeadlessService(old) || isHeadlessService(svc) {
		return nil // headless services may change families
	}
	var allErrs field.ErrorList
	oldFams, fams := old.Spec.IPFamilies, svc.Spec.IPFamilies
	p := field.NewPath("spec", "ipFamilies").Index(0)
	switch {
	case len(oldFams) == len(fams):
		for i, f := range oldFams {
			if f != fams[i] {
				allErrs = append(allErrs, field.Invalid(p, fams, "may not change once set"))
			}
		}
	case len(oldFams) > len(fams):
		if len(svc.Spec.ClusterIPs) == 0 {
			allErrs = append(allErrs, field.Invalid(p, fams, "primary ipFamily can not be unset"))
		}
		if len(fams) > 0 && fams[0] != oldFams[0] {
			allErrs = append(allErrs, field.Invalid(p, svc.Spec.ClusterIPs, "may not change once set"))
		}
		if len(fams) == 1 && policyOf(svc) != corev1.IPFamilyPolicySingleStack {
			allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), svc.Spec.IPFamilyPolicy,
				"must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(oldFams) > 0 && len(fams) > 0 && fams[0] != oldFams[0] {
			allErrs = append(allErrs, field.Invalid(p, svc.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return allErrs
}

// validateLoadBalancerStatus checks what services/status may write.
func validateLoadBalancerStatus(status *corev1.LoadBalancerStatus, spec *corev1.ServiceSpec, fldPath *field.Path) field.ErrorList {
	ingPath := fldPath.Child("ingress")
	if spec.Type != corev1.ServiceTypeLoadBalancer && len(status.Ingress) != 0 {
		return field.ErrorList{field.Forbidden(ingPath, "may only be used when `spec.type` is 'LoadBalancer'")}
	}
	var allErrs field.ErrorList
	for i, ing := range status.Ingress {
		p := ingPath.Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIPForLegacyField(p.Child("ip"), ing.IP, true, nil)...)
		}
		switch {
		case ing.IPMode == nil:
			if ing.IP != "" {
				allErrs = append(allErrs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
			}
		case ing.IP == "":
			allErrs = append(allErrs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case !supportedLoadBalancerIPModes.Has(*ing.IPMode):
			allErrs = append(allErrs, field.NotSupported(p.Child("ipMode"), ing.IPMode, sets.List(supportedLoadBalancerIPModes)))
		}
		if ing.Hostname != "" {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(ing.Hostname, p.Child("hostname"))...)
			if net.ParseIP(ing.Hostname) != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}
