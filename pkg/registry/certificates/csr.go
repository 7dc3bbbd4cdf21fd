package certificates

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

var certificateSigningRequests = generic.Resource{
	Name: "certificatesigningrequests", Singular: "certificatesigningrequest", Kind: "CertificateSigningRequest",
	ShortNames: []string{"csr"},
	New:        generic.NewOf[certificatesv1.CertificateSigningRequest], NewList: generic.NewOf[certificatesv1.CertificateSigningRequestList],
	Strategy:       csrStrategy{},
	StatusStrategy: csrStatusStrategy{},
	Subresources: map[string]generic.SubresourceFunc{
		"certificatesigningrequests/approval": generic.UpdateSubresource(csrApprovalStrategy{}),
	},
	AttrFunc:             csrAttrs,
	FieldLabelConversion: generic.ExactFieldLabels("metadata.name", "spec.signerName"),
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		generic.AgeColumn,
		{Name: "SignerName", Type: "string", Description: csrSpecDocs["signerName"]},
		{Name: "Requestor", Type: "string", Description: csrSpecDocs["request"]},
		{Name: "RequestedDuration", Type: "string", Description: csrSpecDocs["expirationSeconds"]},
		{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
	}, func(csr *certificatesv1.CertificateSigningRequest) ([]interface{}, error) {
		signer, requested := orNone(csr.Spec.SignerName), "<none>"
		if s := csr.Spec.ExpirationSeconds; s != nil {
			requested = duration.HumanDuration(time.Duration(*s) * time.Second)
		}
		return []interface{}{csr.Name, generic.TranslateTimestampSince(csr.CreationTimestamp), signer, csr.Spec.Username, requested, csrCondition(csr)}, nil
	}),
}

// csrSpecDocs describe kubectl's columns; kube takes them from v1beta1.
var csrSpecDocs = certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// csrCondition is kubectl's CONDITION: Denied, else Approved, else
// Pending; then ",Failed" and ",Issued" where they apply.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

var csrAttrs = generic.AttrFuncOf("a certificatesigningrequest", false, func(csr *certificatesv1.CertificateSigningRequest, set fields.Set) {
	set["spec.signerName"] = csr.Spec.SignerName
})

// csrStrategy is kube's: the requestor fields of the spec are the
// requesting user's, whatever the client sent; the spec never changes
// after creation; the main endpoint cannot change status (approval goes
// through /approval, the certificate through /status).
type csrStrategy struct{}

func (csrStrategy) NamespaceScoped() bool                                     { return false }
func (csrStrategy) AllowCreateOnUpdate() bool                                 { return false }
func (csrStrategy) AllowUnconditionalUpdate() bool                            { return true }
func (csrStrategy) Canonicalize(runtime.Object)                               {}
func (csrStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (csrStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// GetResetFields implements rest.ResetFieldsStrategy: nobody owns spec
// (it is the server's once created) or status through this endpoint.
func (csrStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("certificates.k8s.io/v1", "spec", "status")
}

// PrepareForCreate: as kube's strategy, and unlike ResetStatus, the new
// status has an empty (not nil) list of conditions: no request is created
// approved.
func (csrStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	setRequestor(ctx, &csr.Spec)
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// setRequestor fills the requestor fields of spec from the request's
// authenticated user, as kube does (its extra too); calls from inside the
// process have none, and leave them empty, as kube's loopback-less
// callers do.
func setRequestor(ctx context.Context, spec *certificatesv1.CertificateSigningRequestSpec) {
	spec.Username, spec.UID, spec.Groups, spec.Extra = "", "", nil, nil
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return
	}
	spec.Username, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
	if extra := u.GetExtra(); len(extra) > 0 {
		spec.Extra = make(map[string]certificatesv1.ExtraValue, len(extra))
		for k, v := range extra {
			spec.Extra[k] = v
		}
	}
}

func (csrStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	generic.KeepStatus(obj, old)
}

func (csrStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	return append(validateCSR(csr, csrOptionsFor(csr, nil)), validateApprovalUnion(csr, nil)...)
}

func (csrStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	return validateCSRUpdate(csr, oldCSR, csrOptionsFor(csr, oldCSR))
}

// csrStatusStrategy serves certificatesigningrequests/status, where
// signers write the certificate (and Failed conditions); the approval
// conditions stay as they were.
type csrStatusStrategy struct{ csrStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (csrStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("certificates.k8s.io/v1", "spec", "status.conditions")
}

func (csrStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	generic.KeepAllButStatus(obj, old)
	keepConditions(csr, oldCSR, certificatesv1.CertificateApproved)
	keepConditions(csr, oldCSR, certificatesv1.CertificateDenied)
	stampConditions(csr, oldCSR, metav1.Now())
}

func (csrStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := csrOptionsFor(csr, oldCSR)
	opts.allowSettingCertificate = true
	return validateCSRUpdate(csr, oldCSR, opts)
}

// csrApprovalStrategy serves certificatesigningrequests/approval: only
// the conditions change (Approved or Denied, by an approver).
type csrApprovalStrategy struct{ csrStrategy }

// GetResetFields implements rest.ResetFieldsStrategy.
func (csrApprovalStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("certificates.k8s.io/v1", "spec", "status.certificate")
}

func (csrApprovalStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	stampConditions(csr, oldCSR, metav1.Now())
	// Unlike KeepStatus, the conditions are the client's: the rest of the
	// status is old's, as in kube's approval strategy.
	conditions := csr.Status.Conditions
	csr.Spec = oldCSR.Spec
	csr.Status = oldCSR.Status
	csr.Status.Conditions = conditions
}

func (csrApprovalStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := csrOptionsFor(csr, oldCSR)
	opts.allowSettingApprovalConditions = true
	return validateCSRUpdate(csr, oldCSR, opts)
}

// keepConditions puts old's conditions of type t back in place of csr's,
// when both have as many (a status update may not touch them; when the
// counts differ, validation refuses the update).
func keepConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var idx []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			idx = append(idx, i)
		}
	}
	return idx
}

// stampConditions fills the times a client left out: lastUpdateTime is
// now; lastTransitionTime is the old condition's of the same type and
// status, or now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}

// The condition status every CSR condition of these types must have.
var trueOnlyConditions = map[certificatesv1.RequestConditionType]bool{
	certificatesv1.CertificateApproved: true, certificatesv1.CertificateDenied: true, certificatesv1.CertificateFailed: true,
}

var (
	trueStatusOnly  = []string{string(corev1.ConditionTrue)}
	allStatusValues = []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
)
