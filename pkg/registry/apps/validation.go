package apps

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
)

// Validation shared by the apps/v1 workloads, after kube's
// pkg/apis/apps/validation.

// validateSelector validates a workload's required selector: present,
// well formed and not empty ("empty selector is invalid for <what>").
func validateSelector(selector *metav1.LabelSelector, what string, fldPath *field.Path) field.ErrorList {
	if selector == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	allErrs := metav1validation.ValidateLabelSelector(selector, metav1validation.LabelSelectorValidationOptions{}, fldPath)
	if len(selector.MatchLabels)+len(selector.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, selector, "empty selector is invalid for "+what))
	}
	return allErrs
}

// validateTemplateForSelector validates a workload's pod template against
// its selector, as kube's ValidatePodTemplateSpecForReplicaSet. A missing
// selector selects nothing, so the template cannot match it.
func validateTemplateForSelector(template *corev1.PodTemplateSpec, selector *metav1.LabelSelector, kind string, fldPath *field.Path) field.ErrorList {
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath.Child("selector"), selector, "invalid label selector")}
	}
	return podspec.ValidatePodTemplateSpecForWorkload(template, matcher(s), kind, fldPath.Child("template"))
}

func matcher(s labels.Selector) func(map[string]string) (bool, bool) {
	return func(l map[string]string) (bool, bool) { return s.Matches(labels.Set(l)), s.Empty() }
}

// selectorString is a selector as kube prints it in tables.
func selectorString(selector *metav1.LabelSelector) (string, error) {
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// specPath is where a workload's spec is.
var specPath = field.NewPath("spec")

func validateNonnegative(v int64, fldPath *field.Path) field.ErrorList {
	return apivalidation.ValidateNonnegativeField(v, fldPath)
}

func validateOptionalNonnegative(v *int32, fldPath *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	return apivalidation.ValidateNonnegativeField(int64(*v), fldPath)
}

func intOrStringPtr(v *intstr.IntOrString) intstr.IntOrString {
	return ptr.Deref(v, intstr.IntOrString{})
}

// counter is a status counter that must not be negative.
type counter struct {
	name  string
	value int64
}

// validateCounters validates status counters, in order.
func validateCounters(p *field.Path, counters ...counter) field.ErrorList {
	var allErrs field.ErrorList
	for _, c := range counters {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(c.value, p.Child(c.name))...)
	}
	return allErrs
}

// validateNotAbove reports a counter above the number of replicas.
func validateNotAbove(p *field.Path, name string, v, limit int32, limitName string) field.ErrorList {
	if v > limit {
		return field.ErrorList{field.Invalid(p.Child(name), v, fmt.Sprintf("cannot be greater than %s", limitName))}
	}
	return nil
}

// validateCollisionCount: a status collisionCount never goes down.
func validateCollisionCount(p *field.Path, v, old *int32) field.ErrorList {
	if old == nil || (v != nil && *v >= *old) {
		return nil
	}
	return field.ErrorList{field.Invalid(p.Child("collisionCount"), ptr.Deref(v, 0), "cannot be decremented")}
}
