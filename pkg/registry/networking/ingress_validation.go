package networking

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// ingressValidationOptions let an update keep what older servers
// accepted.
type ingressValidationOptions struct {
	allowInvalidSecretName       bool
	allowInvalidWildcardHostRule bool
}

var (
	supportedPathTypes   = []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix)}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

func validateIngress(ing *networkingv1.Ingress, opts ingressValidationOptions) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&ing.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateIngressSpec(&ing.Spec, field.NewPath("spec"), opts)...)
}

func validateIngressSpec(spec *networkingv1.IngressSpec, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		allErrs = append(allErrs, field.Invalid(fldPath, spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		allErrs = append(allErrs, validateIngressBackend(spec.DefaultBackend, fldPath.Child("defaultBackend"))...)
	}
	allErrs = append(allErrs, validateIngressRules(spec.Rules, fldPath.Child("rules"), opts)...)
	allErrs = append(allErrs, validateIngressTLS(spec.TLS, fldPath.Child("tls"), opts)...)
	if spec.IngressClassName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*spec.IngressClassName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("ingressClassName"), *spec.IngressClassName, msg))
		}
	}
	return allErrs
}

// validateHost checks a host of a rule or of a TLS entry: a DNS subdomain,
// or a wildcard one ("*.example.com").
func validateHost(host string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := validation.IsDNS1123Subdomain
	if strings.Contains(host, "*") {
		check = validation.IsWildcardDNS1123Subdomain
	}
	for _, msg := range check(host) {
		allErrs = append(allErrs, field.Invalid(fldPath, host, msg))
	}
	return allErrs
}

func validateIngressTLS(tls []networkingv1.IngressTLS, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tls {
		for j, host := range t.Hosts {
			allErrs = append(allErrs, validateHost(host, fldPath.Index(i).Child("hosts").Index(j))...)
		}
		if !opts.allowInvalidSecretName {
			for _, msg := range validateTLSSecretName(t.SecretName) {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("secretName"), t.SecretName, msg))
			}
		}
	}
	return allErrs
}

func validateTLSSecretName(name string) []string {
	if name == "" {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, false)
}

func validateIngressRules(rules []networkingv1.IngressRule, fldPath *field.Path, opts ingressValidationOptions) field.ErrorList {
	var allErrs field.ErrorList
	for i, rule := range rules {
		wildcard := false
		if rule.Host != "" {
			if isIP(rule.Host) {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("host"), rule.Host, "must be a DNS name, not an IP address"))
			}
			allErrs = append(allErrs, validateHost(rule.Host, fldPath.Index(i).Child("host"))...)
			wildcard = strings.Contains(rule.Host, "*")
		}
		if !wildcard || !opts.allowInvalidWildcardHostRule {
			allErrs = append(allErrs, validateIngressRuleValue(&rule.IngressRuleValue, fldPath.Index(i))...)
		}
	}
	return allErrs
}

// isIP is kube's sloppy parse: with leading zeros, still an IP.
func isIP(s string) bool { return netutils.ParseIPSloppy(s) != nil }

func validateIngressRuleValue(rule *networkingv1.IngressRuleValue, fldPath *field.Path) field.ErrorList {
	if rule.HTTP == nil {
		return nil
	}
	var allErrs field.ErrorList
	p := fldPath.Child("http")
	if len(rule.HTTP.Paths) == 0 {
		allErrs = append(allErrs, field.Required(p.Child("paths"), ""))
	}
	for i := range rule.HTTP.Paths {
		allErrs = append(allErrs, validateHTTPIngressPath(&rule.HTTP.Paths[i], p.Child("paths").Index(i))...)
	}
	return allErrs
}

func validateHTTPIngressPath(path *networkingv1.HTTPIngressPath, fldPath *field.Path) field.ErrorList {
	if path.PathType == nil {
		return field.ErrorList{field.Required(fldPath.Child("pathType"), "pathType must be specified")}
	}
	var allErrs field.ErrorList
	pathPath := fldPath.Child("path")
	switch *path.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(path.Path, "/") {
			allErrs = append(allErrs, field.Invalid(pathPath, path.Path, "must be an absolute path"))
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(path.Path, seq) {
				allErrs = append(allErrs, field.Invalid(pathPath, path.Path, fmt.Sprintf("must not contain '%s'", seq)))
			}
		}
		for _, suffix := range invalidPathSuffixes {
			if strings.HasSuffix(path.Path, suffix) {
				allErrs = append(allErrs, field.Invalid(pathPath, path.Path, fmt.Sprintf("cannot end with '%s'", suffix)))
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if path.Path != "" && !strings.HasPrefix(path.Path, "/") {
			allErrs = append(allErrs, field.Invalid(pathPath, path.Path, "must be an absolute path"))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("pathType"), *path.PathType, supportedPathTypes))
	}
	return append(allErrs, validateIngressBackend(&path.Backend, fldPath.Child("backend"))...)
}

// validateIngressBackend checks a backend: a service (by name, port by
// name or number) or a resource, not both. Service names are DNS labels:
// kube 1.37 relaxed them from DNS-1035 labels (RelaxedServiceNameValidation).
func validateIngressBackend(backend *networkingv1.IngressBackend, fldPath *field.Path) field.ErrorList {
	switch {
	case backend.Resource != nil && backend.Service != nil:
		return field.ErrorList{field.Invalid(fldPath, "", "cannot set both resource and service backends")}
	case backend.Resource != nil:
		return validateTypedLocalObjectReference(backend.Resource, fldPath.Child("resource"))
	case backend.Service == nil:
		return field.ErrorList{field.Invalid(fldPath, "", "resource or service backend is required")}
	}
	var allErrs field.ErrorList
	svc := backend.Service
	if svc.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("service", "name"), ""))
	} else {
		for _, msg := range apivalidation.NameIsDNSLabel(svc.Name, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("service", "name"), svc.Name, msg))
		}
	}
	portPath := fldPath.Child("service", "port")
	switch hasName, hasNumber := svc.Port.Name != "", svc.Port.Number != 0; {
	case hasName && hasNumber:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "cannot set both port name & port number"))
	case hasName:
		for _, msg := range validation.IsValidPortName(svc.Port.Name) {
			allErrs = append(allErrs, field.Invalid(portPath.Child("name"), svc.Port.Name, msg))
		}
	case hasNumber:
		for _, msg := range validation.IsValidPortNum(int(svc.Port.Number)) {
			allErrs = append(allErrs, field.Invalid(portPath.Child("number"), svc.Port.Number, msg))
		}
	default:
		allErrs = append(allErrs, field.Required(fldPath, "port name or number is required"))
	}
	return allErrs
}

func validateTypedLocalObjectReference(ref *corev1.TypedLocalObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ref.APIGroup != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*ref.APIGroup) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("apiGroup"), *ref.APIGroup, msg))
		}
	}
	allErrs = append(allErrs, requiredPathSegment(ref.Kind, fldPath.Child("kind"))...)
	return append(allErrs, requiredPathSegment(ref.Name, fldPath.Child("name"))...)
}

func validateIngressLoadBalancerStatus(status, old *networkingv1.IngressLoadBalancerStatus, fldPath *field.Path) field.ErrorList {
	var existingIPs []string
	for _, ing := range old.Ingress {
		if ing.IP != "" {
			existingIPs = append(existingIPs, ing.IP)
		}
	}
	var allErrs field.ErrorList
	for i, ing := range status.Ingress {
		p := fldPath.Child("ingress").Index(i)
		if ing.IP != "" {
			allErrs = append(allErrs, validation.IsValidIPForLegacyField(p.Child("ip"), ing.IP, true, existingIPs)...)
		}
		if ing.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(ing.Hostname) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostname"), ing.Hostname, msg))
			}
			if isIP(ing.Hostname) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostname"), ing.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return allErrs
}

// hasInvalidSecretName: an ingress stored with a TLS secret name that is
// not valid keeps it through updates.
func hasInvalidSecretName(ing *networkingv1.Ingress) bool {
	for _, tls := range ing.Spec.TLS {
		if len(validateTLSSecretName(tls.SecretName)) > 0 {
			return true
		}
	}
	return false
}

// hasInvalidWildcardHostRule: an ingress stored with invalid rules under a
// wildcard host keeps them through updates.
func hasInvalidWildcardHostRule(ing *networkingv1.Ingress) bool {
	for i := range ing.Spec.Rules {
		rule := &ing.Spec.Rules[i]
		if strings.Contains(rule.Host, "*") && len(validateIngressRuleValue(&rule.IngressRuleValue, nil)) > 0 {
			return true
		}
	}
	return false
}
