package authorization

import (
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateSubjectAccessReviewSpec is kube's: exactly one kind of
// attributes, and a user or a group to ask about.
func validateSubjectAccessReviewSpec(spec *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	allErrs := validateUnion(spec.ResourceAttributes, spec.NonResourceAttributes)
	if spec.User == "" && len(spec.Groups) == 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "user"), spec.User, `at least one of user or group must be specified`))
	}
	return append(allErrs, validateResourceAttributes(spec.ResourceAttributes)...)
}

// validateAttributes is the spec validation of a SelfSubjectAccessReview.
func validateAttributes(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) field.ErrorList {
	return append(validateUnion(ra, nra), validateResourceAttributes(ra)...)
}

func validateUnion(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) field.ErrorList {
	if (ra == nil) == (nra == nil) {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nra, `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
	}
	return nil
}

// validateEmptyMeta refuses metadata in a review, but managed fields (and
// the namespace of a local review).
func validateEmptyMeta(m metav1.ObjectMeta, local bool) field.ErrorList {
	c := m
	c.ManagedFields = nil
	msg := `must be empty`
	if local {
		c.Namespace = ""
		msg = `must be empty except for namespace`
	}
	if !apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, c) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata"), m, msg)}
	}
	return nil
}

func validateResourceAttributes(ra *authorizationv1.ResourceAttributes) field.ErrorList {
	if ra == nil {
		return nil
	}
	path := field.NewPath("spec.resourceAttributes")
	var allErrs field.ErrorList
	if s := ra.FieldSelector; s != nil {
		p := path.Child("fieldSelector")
		allErrs = append(allErrs, validateSelectorShape(s.RawSelector, len(s.Requirements), p)...)
		opts := metav1validation.FieldSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, req := range s.Requirements {
			allErrs = append(allErrs, metav1validation.ValidateFieldSelectorRequirement(req, opts, p.Child("requirements").Index(i))...)
		}
	}
	if s := ra.LabelSelector; s != nil {
		p := path.Child("labelSelector")
		allErrs = append(allErrs, validateSelectorShape(s.RawSelector, len(s.Requirements), p)...)
		opts := metav1validation.LabelSelectorValidationOptions{AllowUnknownOperatorInRequirement: true}
		for i, req := range s.Requirements {
			allErrs = append(allErrs, metav1validation.ValidateLabelSelectorRequirement(req, opts, p.Child("requirements").Index(i))...)
		}
	}
	return allErrs
}

// validateSelectorShape: a selector is either raw or requirements.
func validateSelectorShape(raw string, requirements int, p *field.Path) field.ErrorList {
	if raw != "" && requirements > 0 {
		return field.ErrorList{field.Invalid(p.Child("rawSelector"), raw, "may not specified at the same time as requirements")}
	}
	if raw == "" && requirements == 0 {
		return field.ErrorList{field.Required(p.Child("requirements"), fmt.Sprintf("when %s is specified, requirements or rawSelector is required", p))}
	}
	return nil
}
