package validation

import (
	"strconv"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of the integer-or-percentage fields of workloads and
// disruption budgets (maxUnavailable, maxSurge, minAvailable), as kube's
// apps validation words them.

// ValidatePositiveIntOrPercent: a non-negative integer or a percentage.
func ValidatePositiveIntOrPercent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			allErrs = append(allErrs, field.Invalid(fldPath, v, msg))
		}
	case intstr.Int:
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(v.IntValue()), fldPath)...)
	default:
		allErrs = append(allErrs, field.Invalid(fldPath, v, "must be an integer or percentage (e.g '5%%')"))
	}
	return allErrs
}

// ValidateNotMoreThan100Percent: a percentage is at most 100%.
func ValidateNotMoreThan100Percent(v intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if n, ok := percentValue(v); ok && n > 100 {
		return field.ErrorList{field.Invalid(fldPath, v, "must not be greater than 100%")}
	}
	return nil
}

// IntOrPercentValue is the number of a valid percentage, else the
// integer's value.
func IntOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}
