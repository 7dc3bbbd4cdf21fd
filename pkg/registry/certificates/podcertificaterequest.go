package certificates

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var pcrSpecDocs = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

var podCertificateRequests = generic.Resource{
	Name: "podcertificaterequests", Singular: "podcertificaterequest", Kind: "PodCertificateRequest", Namespaced: true,
	New: generic.NewOf[certificatesv1.PodCertificateRequest], NewList: generic.NewOf[certificatesv1.PodCertificateRequestList],
	Strategy: namespacedPCRStrategy,
	// The signer issues, denies or fails the request on /status, once.
	StatusStrategy: generic.StatusStrategy{Main: namespacedPCRStrategy,
		GroupVersion: "certificates.k8s.io/v1", KeepMetadata: true, Validate: validatePCRStatusWrite},
	AttrFunc:             pcrAttrs,
	FieldLabelConversion: generic.ExactFieldLabels("metadata.name", "spec.signerName", "spec.podName", "spec.nodeName"),
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "PodName", Type: "string", Description: pcrSpecDocs["podName"]},
		{Name: "ServiceAccountName", Type: "string", Description: pcrSpecDocs["serviceAccountName"]},
		{Name: "NodeName", Type: "string", Description: pcrSpecDocs["nodeName"]},
		{Name: "SignerName", Type: "string", Description: pcrSpecDocs["signerName"]},
		{Name: "State", Type: "string", Description: "Is the request Pending, Issued, Denied, or Failed?"},
		{Name: "UnverifiedUserAnnotations", Type: "string", Description: pcrSpecDocs["unverifiedUserAnnotations"]},
	}, func(r *certificatesv1.PodCertificateRequest) ([]interface{}, error) {
		return []interface{}{r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName,
			pcrState(r), labels.FormatLabels(r.Spec.UnverifiedUserAnnotations)}, nil
	}),
}

// pcrState is the last of Issued, Denied, Failed among the conditions,
// or Pending.
func pcrState(r *certificatesv1.PodCertificateRequest) string {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed:
			state = c.Type
		}
	}
	return state
}

var pcrAttrs = generic.AttrFuncOf("a podcertificaterequest", true, func(r *certificatesv1.PodCertificateRequest, set fields.Set) {
	set["spec.signerName"] = r.Spec.SignerName
	set["spec.podName"] = r.Spec.PodName
	set["spec.nodeName"] = string(r.Spec.NodeName)
})

// pcrStrategy is kube's: kubelet asks a signer for a pod's certificate;
// the spec is fixed at creation, the signer answers through /status, and
// every update names the resourceVersion it read.
type pcrStrategy struct{ generic.SpecStrategy }

var namespacedPCRStrategy = pcrStrategy{generic.SpecStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}}

func (pcrStrategy) AllowUnconditionalUpdate() bool { return false }

// Default implements rest.Defaulter: a day at most.
func (pcrStrategy) Default(obj runtime.Object) {
	r := obj.(*certificatesv1.PodCertificateRequest)
	if r.Spec.MaxExpirationSeconds == nil {
		r.Spec.MaxExpirationSeconds = ptr.To[int32](86400)
	}
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (pcrStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("certificates.k8s.io/v1", "status")
}

func (pcrStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePCRCreate(obj.(*certificatesv1.PodCertificateRequest))
}

// kubePCRSpec is the spec as kube prints it in the immutability message:
// its internal type, whose fields have no JSON names.
type kubePCRSpec struct {
	SignerName                string
	PodName                   string
	PodUID                    string
	ServiceAccountName        string
	ServiceAccountUID         string
	NodeName                  string
	NodeUID                   string
	MaxExpirationSeconds      *int32
	PKIXPublicKey             []byte
	ProofOfPossession         []byte
	StubPKCS10Request         []byte
	UnverifiedUserAnnotations map[string]string
}

func (pcrStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &oldR.ObjectMeta, field.NewPath("metadata"))
	if generic.SpecChanged(r, oldR) {
		s := r.Spec
		// v1 has no pkixPublicKey or proofOfPossession: they stay nil.
		shown := kubePCRSpec{s.SignerName, s.PodName, string(s.PodUID), s.ServiceAccountName, string(s.ServiceAccountUID), string(s.NodeName),
			string(s.NodeUID), s.MaxExpirationSeconds, nil, nil, s.StubPKCS10Request, s.UnverifiedUserAnnotations}
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), shown, apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

// validatePCRStatusWrite checks the signer's answer. kube also asks its
// authorizer whether the user may "sign" for the signer; that check
// belongs to authorization, which this server does not enforce yet.
func validatePCRStatusWrite(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	return validatePCRStatusUpdate(r, oldR, metav1.Now().Time)
}
