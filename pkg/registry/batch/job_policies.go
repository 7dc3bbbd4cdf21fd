package batch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The validation of a job's pod failure and success policies, and of the
// index lists (succeededIndexes, status.completedIndexes...) they share.

// kube's limits on the policies.
const (
	maxPodFailurePolicyRules                   = 20
	maxPodFailurePolicyOnExitCodesValues       = 255
	maxPodFailurePolicyOnPodConditionsPatterns = 20
	maxJobSuccessPolicySucceededIndexesLimit   = 64 * 1024
	maxSuccessPolicyRule                       = 20
)

var (
	podFailurePolicyActions = []string{string(batchv1.PodFailurePolicyActionCount), string(batchv1.PodFailurePolicyActionFailIndex),
		string(batchv1.PodFailurePolicyActionFailJob), string(batchv1.PodFailurePolicyActionIgnore)}
	exitCodesOperators = []string{string(batchv1.PodFailurePolicyOnExitCodesOpIn), string(batchv1.PodFailurePolicyOnExitCodesOpNotIn)}
	conditionStatuses  = []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
)

func validatePodFailurePolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rules := spec.PodFailurePolicy.Rules
	rulesPath := fldPath.Child("rules")
	if len(rules) > maxPodFailurePolicyRules {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxPodFailurePolicyRules))
	}
	containers := sets.New[string]()
	for _, c := range spec.Template.Spec.Containers {
		containers.Insert(c.Name)
	}
	for _, c := range spec.Template.Spec.InitContainers {
		containers.Insert(c.Name)
	}
	for i := range rules {
		allErrs = append(allErrs, validatePodFailurePolicyRule(spec, &rules[i], rulesPath.Index(i), containers)...)
	}
	return allErrs
}

func validatePodFailurePolicyRule(spec *batchv1.JobSpec, rule *batchv1.PodFailurePolicyRule, rulePath *field.Path, containers sets.Set[string]) field.ErrorList {
	var allErrs field.ErrorList
	actionPath := rulePath.Child("action")
	switch {
	case rule.Action == "":
		allErrs = append(allErrs, field.Required(actionPath, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case rule.Action == batchv1.PodFailurePolicyActionFailIndex:
		if spec.BackoffLimitPerIndex == nil {
			allErrs = append(allErrs, field.Invalid(actionPath, rule.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, string(rule.Action)):
		allErrs = append(allErrs, field.NotSupported(actionPath, rule.Action, podFailurePolicyActions))
	}
	if rule.OnExitCodes != nil {
		allErrs = append(allErrs, validateOnExitCodes(rule.OnExitCodes, rulePath.Child("onExitCodes"), containers)...)
	}
	if len(rule.OnPodConditions) > 0 {
		allErrs = append(allErrs, validateOnPodConditions(rule.OnPodConditions, rulePath.Child("onPodConditions"))...)
	}
	switch hasExitCodes, hasConditions := rule.OnExitCodes != nil, len(rule.OnPodConditions) > 0; {
	case hasExitCodes && hasConditions:
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	case !hasExitCodes && !hasConditions:
		allErrs = append(allErrs, field.Invalid(rulePath, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return allErrs
}

func validateOnPodConditions(patterns []batchv1.PodFailurePolicyOnPodConditionsPattern, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(patterns) > maxPodFailurePolicyOnPodConditionsPatterns {
		allErrs = append(allErrs, field.TooMany(fldPath, len(patterns), maxPodFailurePolicyOnPodConditionsPatterns))
	}
	for i, pattern := range patterns {
		p := fldPath.Index(i)
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(string(pattern.Type), p.Child("type"))...)
		switch {
		case pattern.Status == "":
			allErrs = append(allErrs, field.Required(p.Child("status"), fmt.Sprintf("valid values: %q", conditionStatuses)))
		case !slices.Contains(conditionStatuses, string(pattern.Status)):
			allErrs = append(allErrs, field.NotSupported(p.Child("status"), pattern.Status, conditionStatuses))
		}
	}
	return allErrs
}

func validateOnExitCodes(req *batchv1.PodFailurePolicyOnExitCodesRequirement, fldPath *field.Path, containers sets.Set[string]) field.ErrorList {
	var allErrs field.ErrorList
	operatorPath := fldPath.Child("operator")
	switch {
	case req.Operator == "":
		allErrs = append(allErrs, field.Required(operatorPath, fmt.Sprintf("valid values: %q", exitCodesOperators)))
	case !slices.Contains(exitCodesOperators, string(req.Operator)):
		allErrs = append(allErrs, field.NotSupported(operatorPath, req.Operator, exitCodesOperators))
	}
	if name := req.ContainerName; name != nil && !containers.Has(*name) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("containerName"), *name, "must be one of the container or initContainer names in the pod template"))
	}
	valuesPath := fldPath.Child("values")
	switch {
	case len(req.Values) == 0:
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "at least one value is required"))
	case len(req.Values) > maxPodFailurePolicyOnExitCodesValues:
		allErrs = append(allErrs, field.TooMany(valuesPath, len(req.Values), maxPodFailurePolicyOnExitCodesValues))
	}
	seen := sets.New[int32]()
	for i, v := range req.Values {
		if req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
			allErrs = append(allErrs, field.Invalid(valuesPath.Index(i), v, "must not be 0 for the In operator"))
		}
		if seen.Has(v) {
			allErrs = append(allErrs, field.Duplicate(valuesPath.Index(i), v))
		}
		seen.Insert(v)
	}
	if !slices.IsSorted(req.Values) {
		allErrs = append(allErrs, field.Invalid(valuesPath, req.Values, "must be ordered"))
	}
	return allErrs
}

// validateSuccessPolicy validates the success policy of an indexed job
// (whose completions are set: validateIndexedJob requires them).
func validateSuccessPolicy(spec *batchv1.JobSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	rules := spec.SuccessPolicy.Rules
	rulesPath := fldPath.Child("rules")
	if len(rules) == 0 {
		allErrs = append(allErrs, field.Required(rulesPath, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRule {
		allErrs = append(allErrs, field.TooMany(rulesPath, len(rules), maxSuccessPolicyRule))
	}
	completions := int32(0)
	if spec.Completions != nil {
		completions = *spec.Completions
	}
	for i, rule := range rules {
		allErrs = append(allErrs, validateSuccessPolicyRule(rule, completions, rulesPath.Index(i))...)
	}
	return allErrs
}

func validateSuccessPolicyRule(rule batchv1.SuccessPolicyRule, completions int32, rulePath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if rule.SucceededCount == nil && rule.SucceededIndexes == nil {
		allErrs = append(allErrs, field.Required(rulePath, "at least one of succeededCount or succeededIndexes must be specified"))
	}
	var total int32
	if idx := rule.SucceededIndexes; idx != nil {
		p := rulePath.Child("succeededIndexes")
		if len(*idx) > maxJobSuccessPolicySucceededIndexesLimit {
			allErrs = append(allErrs, field.TooLong(p, "", maxJobSuccessPolicySucceededIndexesLimit))
		}
		var err error
		if total, err = parseIndexes(*idx, completions); err != nil {
			allErrs = append(allErrs, field.Invalid(p, *idx, "error parsing succeededIndexes: "+err.Error()))
		}
	}
	if n := rule.SucceededCount; n != nil {
		p := rulePath.Child("succeededCount")
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*n), p)...)
		if *n > completions {
			allErrs = append(allErrs, field.Invalid(p, *n, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
		}
		if rule.SucceededIndexes != nil && *n > total {
			allErrs = append(allErrs, field.Invalid(p, *n, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
		}
	}
	return allErrs
}

// parseIndexes parses an index list ("1,3-5,7") of a job of completions,
// and counts its indexes. The intervals must increase.
func parseIndexes(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, interval := range strings.Split(s, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

// parseIndexInterval parses "x" or "x-y", each below completions.
func parseIndexInterval(interval string, completions int32) (int32, int32, error) {
	limits := strings.Split(interval, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
	}
	bounds := make([]int32, len(limits))
	for i, l := range limits {
		n, err := strconv.Atoi(l)
		if err != nil {
			return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", l)
		}
		if n >= int(completions) {
			return 0, 0, fmt.Errorf("too large index: %q", l)
		}
		bounds[i] = int32(n)
	}
	if len(bounds) == 1 {
		return bounds[0], bounds[0], nil
	}
	if bounds[0] >= bounds[1] {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", bounds[0], bounds[1])
	}
	return bounds[0], bounds[1], nil
}
