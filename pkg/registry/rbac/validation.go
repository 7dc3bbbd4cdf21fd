package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// validateRBACName is kube's rule for the names of roles and bindings,
// and of the roles a binding refers to: any valid path segment.
func validateRBACName(name string, _ bool) []string {
	return content.IsPathSegmentName(name)
}

// kube 1.37 checks some of the rules below declaratively (its
// DeclarativeValidationBeta gate is on): a required verb, subject name or
// roleRef name. Those errors say only "Required value", come after the
// others, in field order, and an update that leaves the field as it was
// is not checked again (ratcheting). validateRequired does the same.

// validateRole checks a role, an update of old when old is not nil.
func validateRole(role, old *rbacv1.Role) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&role.ObjectMeta, true, validateRBACName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, true, field.NewPath("rules").Index(i))...)
	}
	if old == nil {
		return append(allErrs, requiredVerbs(role.Rules, nil, false)...)
	}
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, requiredVerbs(role.Rules, old.Rules, true)...)
}

// requiredVerbs is the declarative check that each rule has a verb.
func requiredVerbs(rules, old []rbacv1.PolicyRule, update bool) field.ErrorList {
	if update && apiequality.Semantic.DeepEqual(rules, old) {
		return nil
	}
	var allErrs field.ErrorList
	for i, rule := range rules {
		if len(rule.Verbs) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("rules").Index(i).Child("verbs"), ""))
		}
	}
	return allErrs
}

// requiredNames is the declarative check that each subject, and the
// roleRef, has a name.
func requiredNames(ref rbacv1.RoleRef, subjects []rbacv1.Subject, oldRef *rbacv1.RoleRef, oldSubjects []rbacv1.Subject) field.ErrorList {
	var allErrs field.ErrorList
	if oldRef == nil || !apiequality.Semantic.DeepEqual(subjects, oldSubjects) {
		for i, s := range subjects {
			if s.Name == "" {
				allErrs = append(allErrs, field.Required(field.NewPath("subjects").Index(i).Child("name"), ""))
			}
		}
	}
	if (oldRef == nil || ref != *oldRef) && ref.Name == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("roleRef", "name"), ""))
	}
	return allErrs
}

// validateClusterRole checks a cluster role, an update of old when old is
// not nil: selectors with label values an older role already had stay
// accepted.
func validateClusterRole(role, old *rbacv1.ClusterRole) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&role.ObjectMeta, false, validateRBACName, field.NewPath("metadata"))
	for i, rule := range role.Rules {
		allErrs = append(allErrs, validatePolicyRule(rule, false, field.NewPath("rules").Index(i))...)
	}
	allErrs = append(allErrs, validateAggregationRule(role.AggregationRule, old != nil && hasInvalidLabelValueInSelector(old))...)
	if old == nil {
		return append(allErrs, requiredVerbs(role.Rules, nil, false)...)
	}
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&role.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
	return append(allErrs, requiredVerbs(role.Rules, old.Rules, true)...)
}

func validateAggregationRule(rule *rbacv1.AggregationRule, allowInvalidLabelValue bool) field.ErrorList {
	var allErrs field.ErrorList
	if rule == nil {
		return nil
	}
	selectorsPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
	if len(rule.ClusterRoleSelectors) == 0 {
		allErrs = append(allErrs, field.Required(selectorsPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValue}
	for i := range rule.ClusterRoleSelectors {
		selector := &rule.ClusterRoleSelectors[i]
		allErrs = append(allErrs, metav1validation.ValidateLabelSelector(selector, opts, selectorsPath.Index(i))...)
		if s, err := metav1.LabelSelectorAsSelector(selector); err != nil {
			allErrs = append(allErrs, field.Invalid(selectorsPath.Index(i), s, "invalid label selector."))
		}
	}
	return allErrs
}

// hasInvalidLabelValueInSelector reports whether role's aggregation
// selectors hold a label value kube's newer validation refuses.
func hasInvalidLabelValueInSelector(role *rbacv1.ClusterRole) bool {
	if role.AggregationRule == nil {
		return false
	}
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: false}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		if len(metav1validation.ValidateLabelSelector(&role.AggregationRule.ClusterRoleSelectors[i], opts, nil)) > 0 {
			return true
		}
	}
	return false
}

func validatePolicyRule(rule rbacv1.PolicyRule, namespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return allErrs
	}
	if len(rule.APIGroups) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("resources"), "resource rules must supply at least one resource"))
	}
	return allErrs
}

// validateRoleRef checks the role a binding refers to; a ClusterRoleBinding
// (cluster true) may only refer to a ClusterRole.
func validateRoleRef(ref rbacv1.RoleRef, cluster bool) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		allErrs = append(allErrs, field.NotSupported(path.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"Role", "ClusterRole"}
	if cluster {
		kinds = []string{"ClusterRole"}
	}
	if ref.Kind != "ClusterRole" && (cluster || ref.Kind != "Role") {
		allErrs = append(allErrs, field.NotSupported(path.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name != "" {
		for _, msg := range validateRBACName(ref.Name, false) {
			allErrs = append(allErrs, field.Invalid(path.Child("name"), ref.Name, msg))
		}
	}
	return allErrs
}

func validateSubjects(subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range subjects {
		allErrs = append(allErrs, validateSubject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return allErrs
}

func validateSubject(s rbacv1.Subject, namespaced bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range apivalidation.ValidateServiceAccountName(s.Name, false) {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return allErrs
}

// defaultBinding applies kube's v1 defaults to a binding's roleRef and
// subjects: the rbac group where it is implied.
func defaultBinding(ref *rbacv1.RoleRef, subjects []rbacv1.Subject) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
