package podspec

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The bounds of a projected pod certificate's maxExpirationSeconds, as
// kube's: at least an hour; at most 91 days, or one day for the
// Kubernetes project's own signers (kubernetes.io).
const (
	minPodCertificateSeconds           = 3600
	maxPodCertificateSeconds           = 91 * 24 * 3600
	maxKubernetesPodCertificateSeconds = 24 * 3600
)

// podCertificateKeyTypes are the key types a projected pod certificate
// may ask for, in the order kube lists them.
var podCertificateKeyTypes = []string{"RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519"}

// validatePodCertificateProjection checks a projected podCertificate
// source (the paths' uniqueness across the volume is the caller's).
func validatePodCertificateProjection(c *corev1.PodCertificateProjection, p *field.Path) field.ErrorList {
	allErrs := corevalidation.ValidateSignerName(p.Child("signerName"), c.SignerName)
	if !slices.Contains(podCertificateKeyTypes, c.KeyType) {
		allErrs = append(allErrs, field.NotSupported(p.Child("keyType"), c.KeyType, podCertificateKeyTypes))
	}
	if exp := c.MaxExpirationSeconds; exp != nil {
		limit := int32(maxPodCertificateSeconds)
		if corevalidation.IsKubernetesSignerName(c.SignerName) {
			limit = maxKubernetesPodCertificateSeconds
		}
		switch {
		case *exp < minPodCertificateSeconds:
			allErrs = append(allErrs, field.Invalid(p.Child("maxExpirationSeconds"), *exp,
				fmt.Sprintf("if provided, maxExpirationSeconds must be >= %d", minPodCertificateSeconds)))
		case *exp > limit:
			allErrs = append(allErrs, field.Invalid(p.Child("maxExpirationSeconds"), *exp,
				fmt.Sprintf("if provided, maxExpirationSeconds must be <= %d", limit)))
		}
	}
	if c.CredentialBundlePath == "" && c.KeyPath == "" && c.CertificateChainPath == "" {
		allErrs = append(allErrs, field.Required(p, "specify at least one of credentialBundlePath, keyPath, and certificateChainPath"))
	}
	for _, f := range []struct{ name, path string }{
		{"credentialBundlePath", c.CredentialBundlePath}, {"keyPath", c.KeyPath}, {"certificateChainPath", c.CertificateChainPath},
	} {
		if f.path != "" {
			allErrs = append(allErrs, validateLocalNonReservedPath(f.path, p.Child(f.name))...)
		}
	}
	// kube checks the annotations' keys lowercased (and names them so).
	lower := make(map[string]string, len(c.UserAnnotations))
	for k, v := range c.UserAnnotations {
		lower[strings.ToLower(k)] = v
	}
	return append(allErrs, apivalidation.ValidateAnnotations(lower, p.Child("userAnnotations"))...)
}

// validateClusterTrustBundleProjection checks a projected
// clusterTrustBundle source: one bundle by name, or those of a signer
// (with a label selector).
func validateClusterTrustBundleProjection(b *corev1.ClusterTrustBundleProjection, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case b.Name == nil && b.SignerName == nil:
		allErrs = append(allErrs, field.Required(p, "either name or signerName must be specified"))
	case b.Name != nil && b.SignerName != nil:
		allErrs = append(allErrs, field.Invalid(p, corevalidation.InternalValue(*b), "only one of name and signerName may be used"))
	case b.Name != nil:
		for _, msg := range validation.IsDNS1123Subdomain(*b.Name) {
			allErrs = append(allErrs, field.Invalid(p.Child("name"), *b.Name, "not a valid clustertrustbundlename: "+msg))
		}
		if b.LabelSelector != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("labelSelector"), b.LabelSelector, "labelSelector must be unset if name is specified"))
		}
	default:
		allErrs = append(allErrs, corevalidation.ValidateSignerName(p.Child("signerName"), *b.SignerName)...)
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(b.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	if b.Path == "" {
		allErrs = append(allErrs, field.Required(p.Child("path"), ""))
	} else {
		allErrs = append(allErrs, validateLocalNonReservedPath(b.Path, p.Child("path"))...)
	}
	return allErrs
}
