package certificates

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// kube's bounds of a pod certificate request.
const (
	maxStubPKCS10RequestSize = 10 * 1024
	maxCertificateChainSize  = 100 * 1024
	minMaxExpirationSeconds  = 60 * 60
	maxMaxExpirationSeconds  = 91 * 24 * 60 * 60 // other signers
	kubeMaxExpirationSeconds = 24 * 60 * 60      // kubernetes.io signers
	maxUIDLength             = 128
)

var (
	pcrSpecPath      = field.NewPath("spec")
	pkcs10ReqPath    = pcrSpecPath.Child("stubPKCS10Request")
	certChainPath    = field.NewPath("status", "certificateChain")
	notBeforePath    = field.NewPath("status", "notBefore")
	notAfterPath     = field.NewPath("status", "notAfter")
	beginRefreshPath = field.NewPath("status", "beginRefreshAt")
)

func validatePCRCreate(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&r.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	s := r.Spec
	allErrs = append(allErrs, corevalidation.ValidateSignerName(pcrSpecPath.Child("signerName"), s.SignerName)...)
	if s.UnverifiedUserAnnotations != nil {
		allErrs = append(allErrs, validateUserAnnotations(s.UnverifiedUserAnnotations, pcrSpecPath.Child("unverifiedUserAnnotations"))...)
	}
	allErrs = append(allErrs, validateReference(s.PodName, string(s.PodUID), "podName", "podUID")...)
	allErrs = append(allErrs, validateReference(s.ServiceAccountName, string(s.ServiceAccountUID), "serviceAccountName", "serviceAccountUID")...)
	allErrs = append(allErrs, validateReference(string(s.NodeName), string(s.NodeUID), "nodeName", "nodeUID")...)
	if s.MaxExpirationSeconds == nil {
		return append(allErrs, field.Required(pcrSpecPath.Child("maxExpirationSeconds"), "must be set"))
	}
	maxMax := maxMaxExpirationSeconds
	if corevalidation.IsKubernetesSignerName(s.SignerName) {
		maxMax = kubeMaxExpirationSeconds
	}
	if m := *s.MaxExpirationSeconds; m < minMaxExpirationSeconds || int(m) > maxMax {
		allErrs = append(allErrs, field.Invalid(pcrSpecPath.Child("maxExpirationSeconds"), s.MaxExpirationSeconds,
			fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, maxMax)))
	}
	// v1 has only the stub request; pkixPublicKey and proofOfPossession,
	// its alternative, are gone from the API.
	if len(s.StubPKCS10Request) == 0 {
		return append(allErrs, field.Invalid(pcrSpecPath, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
	}
	return append(allErrs, validateStubPKCS10Request(s.StubPKCS10Request)...)
}

// validateReference checks the name (a DNS subdomain) and UID (1 to 128
// characters) of the pod, service account or node a request names.
func validateReference(name, uid, nameField, uidField string) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(pcrSpecPath.Child(nameField), name, msg))
	}
	if uid == "" {
		allErrs = append(allErrs, field.Invalid(pcrSpecPath.Child(uidField), uid, "must not be empty"))
	}
	if len(uid) > maxUIDLength {
		allErrs = append(allErrs, field.TooLong(pcrSpecPath.Child(uidField), uid, maxUIDLength))
	}
	return allErrs
}

// validateUserAnnotations: domain-prefixed keys (case-insensitive), no
// more than the total size of annotations.
func validateUserAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for k := range annotations {
		allErrs = append(allErrs, validation.IsDomainPrefixedKey(fldPath, strings.ToLower(k))...)
	}
	if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
		allErrs = append(allErrs, field.TooLong(fldPath, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return allErrs
}

// validateStubPKCS10Request checks the key and the signature of the
// request, not its content (kubelet sends empty ones).
func validateStubPKCS10Request(der []byte) field.ErrorList {
	if len(der) > maxStubPKCS10RequestSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, der, maxStubPKCS10RequestSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() && pub.Curve != elliptic.P521() {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

var terminalPCRConditions = []string{
	certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed,
}

// validatePCRStatusUpdate is kube's: a request moves once from pending
// to Issued (with a certificate for the requested key, and consistent
// times), Denied or Failed, and then never changes.
func validatePCRStatusUpdate(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	if allErrs := corevalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata")); len(allErrs) > 0 {
		return allErrs
	}
	var allErrs field.ErrorList
	known := 0
	for i, c := range r.Status.Conditions {
		// sic: kube's path puts a dot before the index.
		p := field.NewPath("status", "conditions", "["+strconv.Itoa(i)+"]")
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			if known++; known > 1 {
				allErrs = append(allErrs, field.Invalid(p.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				allErrs = append(allErrs, field.NotSupported(p.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("type"), c.Type, terminalPCRConditions))
		}
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(r.Status.Conditions, field.NewPath("status", "conditions"))...)
	if len(allErrs) > 0 {
		return allErrs
	}
	status := field.NewPath("status")
	switch {
	case pcrIs(old, terminalPCRConditions...):
		return unchanged(r.Status, old.Status, status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case pcrIs(r, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed):
		want := certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions}
		return unchanged(r.Status, want, status, "non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case pcrIs(r, certificatesv1.PodCertificateRequestConditionTypeIssued):
		return validateIssued(r, old, now)
	}
	return unchanged(r.Status, old.Status, status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

// pcrIs reports whether one of conditions is true of r.
func pcrIs(r *certificatesv1.PodCertificateRequest, conditions ...string) bool {
	for _, c := range r.Status.Conditions {
		if c.Status == metav1.ConditionTrue && slices.Contains(conditions, c.Type) {
			return true
		}
	}
	return false
}

func unchanged(got, want any, fldPath *field.Path, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(got, want) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, field.OmitValueType{}, detail)}
}

// validateIssued checks an issued certificate chain: its leaf was issued
// to the requested key, lives 1 hour to maxExpirationSeconds, starts
// within 5 minutes of now, and the status times agree with it.
func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := r.Status.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	allErrs := validateLeafNames(leaf)
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return append(allErrs, field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR"))
	}
	if key, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !key.Equal(leaf.PublicKey) {
		return append(allErrs, field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key"))
	}
	if errs := validateIssuedTimes(r, leaf, now); len(errs) > 0 {
		return append(allErrs, errs...)
	}
	// The rest of the chain cannot be verified without its roots; each
	// must at least be a certificate.
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return allErrs
		}
		if b.Type != "CERTIFICATE" {
			// sic: kube's message has this typo.
			return append(allErrs, field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks"))
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return append(allErrs, field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509"))
		}
	}
}

func validateLeafNames(leaf *x509.Certificate) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" {
			allErrs = append(allErrs, field.Invalid(certChainPath, name, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(name, "..") {
			allErrs = append(allErrs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			allErrs = append(allErrs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, addr := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(addr); err != nil {
			allErrs = append(allErrs, field.Invalid(certChainPath, addr, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return allErrs
}

func validateIssuedTimes(r *certificatesv1.PodCertificateRequest, leaf *x509.Certificate, now time.Time) field.ErrorList {
	st := r.Status
	var allErrs field.ErrorList
	if st.NotBefore == nil {
		allErrs = append(allErrs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if st.NotAfter == nil {
		allErrs = append(allErrs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if st.BeginRefreshAt == nil {
		allErrs = append(allErrs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !st.NotBefore.Time.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(st.NotBefore.Time.After(now.Add(-5*time.Minute)) && st.NotBefore.Time.Before(now.Add(5*time.Minute))):
		return field.ErrorList{field.Invalid(notBeforePath, st.NotBefore.Time, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !st.NotAfter.Time.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, st.NotAfter.Time, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case st.BeginRefreshAt.Time.Before(st.NotBefore.Time.Add(10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes after status.notBefore")}
	case st.BeginRefreshAt.Time.After(st.NotAfter.Time.Add(-10 * time.Minute)):
		return field.ErrorList{field.Invalid(beginRefreshPath, st.BeginRefreshAt.Time, "must be at least 10 minutes before status.notAfter")}
	}
	return nil
}
