package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// IsKubernetesSignerName reports whether signerName is one of the
// Kubernetes project's (kubernetes.io or a subdomain).
func IsKubernetesSignerName(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// ValidateSignerName is kube's: "example.com/signer-name", a domain of at
// least two DNS labels, a path of DNS subdomains joined by dots (room for
// "<namespace>.<name>"), 571 characters at most.
func ValidateSignerName(fldPath *field.Path, signerName string) field.ErrorList {
	if signerName == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	domain, path, ok := strings.Cut(signerName, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(fldPath, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var allErrs field.ErrorList
	const maxDomain = validation.DNS1123SubdomainMaxLength
	if len(domain) > maxDomain {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxDomain))
	}
	// One label's errors only: the others would read the same.
	domainLabels := strings.Split(domain, ".")
	for _, label := range domainLabels {
		if errs := validation.IsDNS1123Label(label); len(errs) > 0 {
			for _, msg := range errs {
				allErrs = append(allErrs, field.Invalid(fldPath, domain, fmt.Sprintf("validating label %q: %s", label, msg)))
			}
			break
		}
	}
	if len(domainLabels) < 2 {
		allErrs = append(allErrs, field.Invalid(fldPath, domain, "should be a domain with at least two segments separated by dots"))
	}
	for _, label := range strings.Split(path, ".") {
		if errs := validation.IsDNS1123Subdomain(label); len(errs) > 0 {
			for _, msg := range errs {
				allErrs = append(allErrs, field.Invalid(fldPath, path, fmt.Sprintf("validating label %q: %s", label, msg)))
			}
			break
		}
	}
	const maxPath = validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1
	if maxName := maxDomain + maxPath + 1; len(signerName) > maxName {
		allErrs = append(allErrs, field.TooLong(fldPath, "", maxName))
	}
	return allErrs
}
