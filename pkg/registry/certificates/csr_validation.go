package certificates

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// csrOptions are the relaxations of kube's CSR validation: what a
// subresource may change, and the flaws tolerated in an update because
// the stored object has them already.
type csrOptions struct {
	allowSettingApprovalConditions bool // /approval
	allowSettingCertificate        bool // /status

	allowBothApprovedAndDenied   bool // not a rule of validateCSR's: see approvalUnion
	allowLegacySignerName        bool
	allowDuplicateConditionTypes bool
	allowEmptyConditionType      bool
	allowArbitraryCertificate    bool
	allowUnknownUsages           bool
	allowDuplicateUsages         bool
}

// csrOptionsFor returns the options of a create (old nil) or an update.
func csrOptionsFor(csr, old *certificatesv1.CertificateSigningRequest) csrOptions {
	if old == nil {
		return csrOptions{}
	}
	types := map[certificatesv1.RequestConditionType]int{}
	for _, c := range old.Status.Conditions {
		types[c.Type]++
	}
	duplicateTypes := false
	for _, n := range types {
		duplicateTypes = duplicateTypes || n > 1
	}
	return csrOptions{
		allowBothApprovedAndDenied:   types[certificatesv1.CertificateApproved] > 0 && types[certificatesv1.CertificateDenied] > 0,
		allowLegacySignerName:        old.Spec.SignerName == legacyUnknownSignerName,
		allowDuplicateConditionTypes: duplicateTypes,
		allowEmptyConditionType:      types[""] > 0,
		allowArbitraryCertificate:    bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || validateCertificateChain(old.Status.Certificate) != nil,
		allowUnknownUsages:           slices.ContainsFunc(old.Spec.Usages, func(u certificatesv1.KeyUsage) bool { return !validUsages.Has(string(u)) }),
		allowDuplicateUsages:         hasDuplicates(old.Spec.Usages),
	}
}

// legacyUnknownSignerName is v1beta1's default signer, refused by v1.
const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

var validUsages = sets.New[string](
	string(certificatesv1.UsageSigning), string(certificatesv1.UsageDigitalSignature), string(certificatesv1.UsageContentCommitment),
	string(certificatesv1.UsageKeyEncipherment), string(certificatesv1.UsageKeyAgreement), string(certificatesv1.UsageDataEncipherment),
	string(certificatesv1.UsageCertSign), string(certificatesv1.UsageCRLSign), string(certificatesv1.UsageEncipherOnly),
	string(certificatesv1.UsageDecipherOnly), string(certificatesv1.UsageAny), string(certificatesv1.UsageServerAuth),
	string(certificatesv1.UsageClientAuth), string(certificatesv1.UsageCodeSigning), string(certificatesv1.UsageEmailProtection),
	string(certificatesv1.UsageSMIME), string(certificatesv1.UsageIPsecEndSystem), string(certificatesv1.UsageIPsecTunnel),
	string(certificatesv1.UsageIPsecUser), string(certificatesv1.UsageTimestamping), string(certificatesv1.UsageOCSPSigning),
	string(certificatesv1.UsageMicrosoftSGC), string(certificatesv1.UsageNetscapeSGC),
)

func hasDuplicates(usages []certificatesv1.KeyUsage) bool {
	seen := map[certificatesv1.KeyUsage]bool{}
	for _, u := range usages {
		if seen[u] {
			return true
		}
		seen[u] = true
	}
	return false
}

func validateCSR(csr *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	// Any name will do for a CSR.
	anyName := func(string, bool) []string { return nil }
	allErrs := corevalidation.ValidateObjectMeta(&csr.ObjectMeta, false, anyName, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if err := checkCertificateRequest(csr.Spec.Request); err != nil {
		allErrs = append(allErrs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	if len(csr.Spec.Usages) == 0 {
		allErrs = append(allErrs, field.Required(spec.Child("usages"), ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range csr.Spec.Usages {
		if !opts.allowUnknownUsages && !validUsages.Has(string(u)) {
			allErrs = append(allErrs, field.NotSupported(spec.Child("usages").Index(i), u, sets.List(validUsages)))
		}
		if !opts.allowDuplicateUsages && seen[u] {
			allErrs = append(allErrs, field.Duplicate(spec.Child("usages").Index(i), u))
		}
		seen[u] = true
	}
	if !opts.allowLegacySignerName && csr.Spec.SignerName == legacyUnknownSignerName {
		allErrs = append(allErrs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		allErrs = append(allErrs, corevalidation.ValidateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		allErrs = append(allErrs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	allErrs = append(allErrs, validateCSRConditions(field.NewPath("status", "conditions"), csr, opts)...)
	if !opts.allowArbitraryCertificate {
		if err := validateCertificateChain(csr.Status.Certificate); err != nil {
			allErrs = append(allErrs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return allErrs
}

// checkCertificateRequest parses a PEM PKCS#10 request and checks its
// signature: a request nobody could have signed is refused at once.
func checkCertificateRequest(pemBytes []byte) error {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

// validateCertificateChain accepts nothing, or CERTIFICATE PEM blocks
// without headers, each of which parses.
func validateCertificateChain(pemData []byte) error {
	if len(pemData) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(pemData)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		pemData = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

func validateCSRConditions(fldPath *field.Path, csr *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range csr.Status.Conditions {
		p := fldPath.Index(i)
		if !opts.allowEmptyConditionType && c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), ""))
		}
		allowed := allStatusValues
		if trueOnlyConditions[c.Type] {
			allowed = trueStatusOnly
		}
		switch {
		case c.Status == "":
			allErrs = append(allErrs, field.Required(p.Child("status"), ""))
		case !slices.Contains(allowed, string(c.Status)):
			allErrs = append(allErrs, field.NotSupported(p.Child("status"), c.Status, allowed))
		}
		if !opts.allowDuplicateConditionTypes {
			if seen[c.Type] {
				allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
	}
	return allErrs
}

// approvalUnion: a CSR is Approved or Denied, not both. kube v1.37
// states the rule declaratively (at beta, so its message replaces the
// hand-written one) and reports it after the other errors, once.
var approvalUnion = validate.NewUnionMembership(
	validate.NewUnionMember(`conditions[{"type": "Approved"}]`), validate.NewUnionMember(`conditions[{"type": "Denied"}]`))

func validateApprovalUnion(csr, old *certificatesv1.CertificateSigningRequest) field.ErrorList {
	op := operation.Operation{Type: operation.Create}
	var oldConds []certificatesv1.CertificateSigningRequestCondition
	if old != nil {
		op.Type, oldConds = operation.Update, old.Status.Conditions
	}
	has := func(t certificatesv1.RequestConditionType) validate.ExtractorFn[[]certificatesv1.CertificateSigningRequestCondition, bool] {
		return func(conds []certificatesv1.CertificateSigningRequestCondition) bool {
			return slices.ContainsFunc(conds, func(c certificatesv1.CertificateSigningRequestCondition) bool { return c.Type == t })
		}
	}
	return validate.ZeroOrOneOfUnion(context.Background(), op, field.NewPath("status", "conditions"), csr.Status.Conditions, oldConds,
		approvalUnion, has(certificatesv1.CertificateApproved), has(certificatesv1.CertificateDenied))
}

func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest, opts csrOptions) field.ErrorList {
	allErrs := validateCSR(csr, opts)
	conditions := field.NewPath("status", "conditions")
	// Approved, Denied and Failed conditions stay once set.
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		if len(findConditions(csr, t)) < len(findConditions(old, t)) {
			allErrs = append(allErrs, field.Forbidden(conditions, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		}
	}
	if !opts.allowSettingApprovalConditions {
		for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied} {
			oldConds, newConds := findConditions(old, t), findConditions(csr, t)
			switch {
			case len(newConds) < len(oldConds): // refused above
			case len(newConds) > len(oldConds):
				allErrs = append(allErrs, field.Forbidden(conditions, fmt.Sprintf("updates may not add a condition of type %q", t)))
			case !apiequality.Semantic.DeepEqual(oldConds, newConds):
				allErrs = append(allErrs, field.Forbidden(conditions, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, diff.Diff(oldConds, newConds))))
			}
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		certificate := field.NewPath("status", "certificate")
		if !opts.allowSettingCertificate {
			allErrs = append(allErrs, field.Forbidden(certificate, "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			allErrs = append(allErrs, field.Forbidden(certificate, "updates may not modify existing certificate content"))
		}
	}
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&csr.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	if !opts.allowBothApprovedAndDenied {
		allErrs = append(allErrs, validateApprovalUnion(csr, old)...)
	}
	return allErrs
}

func findConditions(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}
