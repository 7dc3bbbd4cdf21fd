package policy

import (
	"context"
	"encoding/json"

	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var podDisruptionBudgets = generic.Resource{
	Name: "poddisruptionbudgets", Singular: "poddisruptionbudget", Kind: "PodDisruptionBudget", Namespaced: true,
	ShortNames: []string{"pdb"},
	New:        generic.NewOf[policyv1.PodDisruptionBudget], NewList: generic.NewOf[policyv1.PodDisruptionBudgetList],
	Strategy: pdbStrategy{generic.BaseStrategy{Namespaced: true}},
	// poddisruptionbudgets/status, which the disruption controller and
	// evictions write: the spec stays.
	StatusStrategy: generic.StatusStrategy{Main: pdbStrategy{generic.BaseStrategy{Namespaced: true}}, GroupVersion: "policy/v1",
		Validate: validatePDBStatus},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		generic.AgeColumn,
	}, func(pdb *policyv1.PodDisruptionBudget) ([]interface{}, error) {
		return []interface{}{
			pdb.Name, intOrPercentCell(pdb.Spec.MinAvailable), intOrPercentCell(pdb.Spec.MaxUnavailable),
			int64(pdb.Status.DisruptionsAllowed), generic.TranslateTimestampSince(pdb.CreationTimestamp),
		}, nil
	}),
}

func intOrPercentCell(v *intstr.IntOrString) string {
	if v == nil {
		return "N/A"
	}
	return v.String()
}

// pdbStrategy: kube validates a budget's spec only (the Store checks its
// name as a path segment), and every update must name the
// resourceVersion it read, since evictions count on the status.
type pdbStrategy struct{ generic.BaseStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: the main resource does not change status.
func (pdbStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("policy/v1", "status")
}

func (pdbStrategy) AllowUnconditionalUpdate() bool { return false }

func (pdbStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pdb := obj.(*policyv1.PodDisruptionBudget)
	generic.ResetStatus(pdb)
	generic.StartGeneration(pdb)
	stripV1beta1Label(pdb.Spec.Selector)
}

func (pdbStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pdb, oldPDB := obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget)
	generic.KeepStatus(pdb, oldPDB)
	generic.BumpGenerationOnSpecChange(pdb, oldPDB)
	if !apiequality.Semantic.DeepEqual(pdb.Spec.Selector, oldPDB.Spec.Selector) {
		stripV1beta1Label(pdb.Spec.Selector)
	}
}

// v1beta1Label is the label kube's policy/v1beta1 conversion used to keep
// an empty selector's meaning ("match none" there, "match all" in v1).
const v1beta1Label = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

// matchNoneSelector is v1beta1's empty selector, as kube stores it.
var matchNoneSelector = &metav1.LabelSelector{
	MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1beta1Label, Operator: metav1.LabelSelectorOpExists}},
}

// stripV1beta1Label drops requirements on v1beta1Label from a selector
// that is not exactly kube's match-none selector, so that users cannot
// combine it with their own.
func stripV1beta1Label(s *metav1.LabelSelector) {
	if s == nil || apiequality.Semantic.DeepEqual(s, matchNoneSelector) {
		return
	}
	kept := s.MatchExpressions[:0]
	for _, e := range s.MatchExpressions {
		if e.Key != v1beta1Label {
			kept = append(kept, e)
		}
	}
	s.MatchExpressions = kept
}

func (pdbStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, false, field.NewPath("spec"))
}

// ValidateUpdate keeps accepting a selector with label values kube no
// longer allows, when the old one had them.
func (pdbStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	oldSelector := old.(*policyv1.PodDisruptionBudget).Spec.Selector
	allowInvalidValues := oldSelector != nil &&
		len(metav1validation.ValidateLabelSelector(oldSelector, metav1validation.LabelSelectorValidationOptions{}, nil)) > 0
	return validatePDBSpec(&obj.(*policyv1.PodDisruptionBudget).Spec, allowInvalidValues, field.NewPath("spec"))
}

func validatePDBSpec(spec *policyv1.PodDisruptionBudgetSpec, allowInvalidLabelValues bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, internalSpec{spec}, "minAvailable and maxUnavailable cannot be both set"))
	}
	if v := spec.MinAvailable; v != nil {
		allErrs = append(allErrs, corevalidation.ValidatePositiveIntOrPercent(*v, fldPath.Child("minAvailable"))...)
		allErrs = append(allErrs, corevalidation.ValidateNotMoreThan100Percent(*v, fldPath.Child("minAvailable"))...)
	}
	if v := spec.MaxUnavailable; v != nil {
		allErrs = append(allErrs, corevalidation.ValidatePositiveIntOrPercent(*v, fldPath.Child("maxUnavailable"))...)
		allErrs = append(allErrs, corevalidation.ValidateNotMoreThan100Percent(*v, fldPath.Child("maxUnavailable"))...)
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(spec.Selector, opts, fldPath.Child("selector"))...)
	if p := spec.UnhealthyPodEvictionPolicy; p != nil && *p != policyv1.IfHealthyBudget && *p != policyv1.AlwaysAllow {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("unhealthyPodEvictionPolicy"), *p,
			[]policyv1.UnhealthyPodEvictionPolicyType{policyv1.AlwaysAllow, policyv1.IfHealthyBudget}))
	}
	return allErrs
}

// internalSpec shows a spec as kube does in messages: its internal type,
// whose fields have no JSON names (their values keep theirs).
type internalSpec struct {
	*policyv1.PodDisruptionBudgetSpec
}

func (s internalSpec) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		MinAvailable               *intstr.IntOrString
		Selector                   *metav1.LabelSelector
		MaxUnavailable             *intstr.IntOrString
		UnhealthyPodEvictionPolicy *policyv1.UnhealthyPodEvictionPolicyType
	}{s.MinAvailable, s.Selector, s.MaxUnavailable, s.UnhealthyPodEvictionPolicy})
}

// validatePDBStatus checks the conditions and counts a status write
// reports.
func validatePDBStatus(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	s, p := &obj.(*policyv1.PodDisruptionBudget).Status, field.NewPath("status")
	allErrs := metav1validation.ValidateConditions(s.Conditions, p.Child("conditions"))
	for _, c := range []struct {
		name  string
		value int32
	}{
		{"disruptionsAllowed", s.DisruptionsAllowed}, {"currentHealthy", s.CurrentHealthy},
		{"desiredHealthy", s.DesiredHealthy}, {"expectedPods", s.ExpectedPods},
	} {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(c.value), p.Child(c.name))...)
	}
	return allErrs
}
