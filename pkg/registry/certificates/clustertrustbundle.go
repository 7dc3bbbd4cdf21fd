package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var clusterTrustBundles = generic.Resource{
	Name: "clustertrustbundles", Singular: "clustertrustbundle", Kind: "ClusterTrustBundle",
	New: generic.NewOf[certificatesv1.ClusterTrustBundle], NewList: generic.NewOf[certificatesv1.ClusterTrustBundleList],
	Strategy:             ctbStrategy{},
	AttrFunc:             ctbAttrs,
	FieldLabelConversion: generic.ExactFieldLabels("metadata.name", "spec.signerName"),
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "SignerName", Type: "string", Description: certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]},
	}, func(b *certificatesv1.ClusterTrustBundle) ([]interface{}, error) {
		return []interface{}{b.Name, orNone(b.Spec.SignerName)}, nil
	}),
}

var ctbAttrs = generic.AttrFuncOf("a clustertrustbundle", false, func(b *certificatesv1.ClusterTrustBundle, set fields.Set) {
	set["spec.signerName"] = b.Spec.SignerName
})

// ctbStrategy is kube's: a bundle of CA certificates, optionally tied to
// a signer (whose name then prefixes the bundle's name); every update
// names the resourceVersion it read.
type ctbStrategy struct{ generic.BaseStrategy }

func (ctbStrategy) AllowUnconditionalUpdate() bool { return false }

func (ctbStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateClusterTrustBundle(obj.(*certificatesv1.ClusterTrustBundle), true)
}

func (ctbStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	b, oldB := obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle)
	// An unchanged bundle is not parsed again: an update must not fail
	// because Go's PEM or X.509 parsing got stricter.
	allErrs := validateClusterTrustBundle(b, b.Spec.TrustBundle != oldB.Spec.TrustBundle)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&b.ObjectMeta, &oldB.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(b.Spec.SignerName, oldB.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle, parseBundle bool) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&b.ObjectMeta, false, ctbNameValidator(b.Spec.SignerName), field.NewPath("metadata"))
	if b.Spec.SignerName != "" {
		allErrs = append(allErrs, corevalidation.ValidateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parseBundle {
		allErrs = append(allErrs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return allErrs
}

// ctbNameValidator: a bundle of a signer is named
// "<signer, '/' as ':'>:<DNS subdomain>"; one without a signer has a
// DNS subdomain name without ':'.
func ctbNameValidator(signerName string) apivalidation.ValidateNameFunc {
	return func(name string, prefix bool) []string {
		if signerName == "" {
			if strings.Contains(name, ":") {
				return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
			}
			return apivalidation.NameIsDNSSubdomain(name, prefix)
		}
		want := strings.ReplaceAll(signerName, "/", ":") + ":"
		if !strings.HasPrefix(name, want) {
			return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, want)}
		}
		return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, want), prefix)
	}
}

// maxTrustBundleSize bounds spec.trustBundle (1 MiB), as kube does.
const maxTrustBundleSize = 1 << 20

// validateTrustBundle accepts one or more distinct CA certificates, as
// PEM CERTIFICATE blocks without headers.
func validateTrustBundle(path *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(path, "", maxTrustBundleSize)}
	}
	const omitted = "<value omitted>"
	var allErrs field.ErrorList
	indices := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if msg := checkTrustAnchor(b); msg != "" {
			allErrs = append(allErrs, field.Invalid(path, omitted, fmt.Sprintf("entry %d %s", i, msg)))
			continue
		}
		indices[string(b.Bytes)] = append(indices[string(b.Bytes)], i)
	}
	// A malformed block says enough: no duplicate or missing anchors on top.
	if len(allErrs) > 0 {
		return allErrs
	}
	if len(indices) == 0 {
		allErrs = append(allErrs, field.Invalid(path, omitted, "at least one trust anchor must be provided"))
	}
	for _, idx := range indices {
		if len(idx) > 1 {
			allErrs = append(allErrs, field.Invalid(path, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", idx)))
		}
	}
	return allErrs
}

// checkTrustAnchor returns what is wrong with one block of a bundle, or "".
func checkTrustAnchor(b *pem.Block) string {
	if b.Type != "CERTIFICATE" {
		return "has bad block type: " + b.Type
	}
	if len(b.Headers) != 0 {
		return "has PEM block headers"
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return "does not parse as X.509"
	case !cert.IsCA:
		return "does not have the CA bit set"
	case !cert.BasicConstraintsValid:
		return "has invalid basic constraints"
	}
	return ""
}
