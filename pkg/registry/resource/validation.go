package resource

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// Kube validates resource.k8s.io twice: by hand, and declaratively (from
// the API types' tags); a rule moved to the declarative side answers from
// there, and kube lists those errors after the handwritten ones. The
// checks here mark such errors with MarkCoveredByDeclarative (declarative),
// and every strategy returns declarativeLast(errs). The declarative errors
// come from apimachinery's validate package, as kube's do, so that their
// messages are kube's.

// declarative marks errs as reported by kube's declarative validation.
func declarative(errs field.ErrorList) field.ErrorList { return errs.MarkCoveredByDeclarative() }

// declarativeLast orders errs as kube returns them: the handwritten
// errors, then the declarative ones, each in their own order.
func declarativeLast(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		if !e.CoveredByDeclarative {
			out = append(out, e)
		}
	}
	for _, e := range errs {
		if e.CoveredByDeclarative {
			out = append(out, e)
		}
	}
	return out
}

// dvCtx and create are what apimachinery's declarative checks take; the
// ones used here look at neither.
var (
	dvCtx  = context.Background()
	create = operation.Operation{Type: operation.Create}
)

// coverage says which checks of a list kube has moved to declarative
// validation.
type coverage int

const (
	sizeCovered coverage = iota
	uniquenessCovered
	keysCovered
)

// validateSlice checks the size of a list (a negative max: none) and its
// items; past the size nothing else is checked.
func validateSlice[T any](list []T, max int, item func(T, *field.Path) field.ErrorList, fldPath *field.Path, covered ...coverage) field.ErrorList {
	if max >= 0 && len(list) > max {
		err := field.ErrorList{field.TooMany(fldPath, len(list), max).WithOrigin("maxItems")}
		if slices.Contains(covered, sizeCovered) {
			return declarative(err)
		}
		return err
	}
	var allErrs field.ErrorList
	for i := range list {
		allErrs = append(allErrs, item(list[i], fldPath.Index(i))...)
	}
	return allErrs
}

// validateSet is validateSlice and no two items with the same key. A
// declarative duplicate shows the whole item, and comes before the
// items' errors; a handwritten one shows the key, after them.
func validateSet[T any, K comparable](list []T, max int, item func(T, *field.Path) field.ErrorList, key func(T) K, fldPath *field.Path, covered ...coverage) field.ErrorList {
	if max >= 0 && len(list) > max {
		return validateSlice(list, max, item, fldPath, covered...)
	}
	var allErrs field.ErrorList
	if slices.Contains(covered, uniquenessCovered) {
		allErrs = declarative(validate.ValSliceUnique(dvCtx, create, fldPath, list, nil, func(a, b *T) bool { return key(*a) == key(*b) }))
	}
	allErrs = append(allErrs, validateSlice(list, -1, item, fldPath)...)
	if !slices.Contains(covered, uniquenessCovered) {
		seen := sets.New[K]()
		for i := range list {
			k := key(list[i])
			if seen.Has(k) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), k))
			}
			seen.Insert(k)
		}
	}
	return allErrs
}

// validateMap checks the size of a map (a negative max: none), its keys
// and its items; keys longer than truncateKeyLen are shortened in paths.
func validateMap[K ~string, T any](m map[K]T, max, truncateKeyLen int, key func(K, *field.Path) field.ErrorList, item func(T, *field.Path) field.ErrorList, fldPath *field.Path, covered ...coverage) field.ErrorList {
	if max >= 0 && len(m) > max {
		return field.ErrorList{field.TooMany(fldPath, len(m), max)}
	}
	var allErrs field.ErrorList
	for k, v := range m {
		keyErrs := key(k, fldPath)
		if slices.Contains(covered, keysCovered) {
			keyErrs = declarative(keyErrs)
		}
		allErrs = append(allErrs, keyErrs...)
		allErrs = append(allErrs, item(v, fldPath.Key(truncate(string(k), truncateKeyLen)))...)
	}
	return allErrs
}

func truncate(s string, max int) string {
	max = maxInt(max, 16)
	if len(s) <= max {
		return s
	}
	const ellipsis = "..."
	rest := max - len(ellipsis)
	return s[:(rest+1)/2] + ellipsis + s[len(s)-rest/2:]
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func stringKey(s string) string { return s }

// validateLabelValue reports every problem of a label value.
func validateLabelValue(value string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateDriverName is kube's check of a CSI driver name, which driver
// names share: required, 63 characters, a DNS subdomain in any case.
func validateDriverName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(name) > resourcev1.DriverNameMaxLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", resourcev1.DriverNameMaxLength))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}

// declarativeDriverName is the same rule where kube checks it
// declaratively (a format, then the length).
func declarativeDriverName(name string, fldPath *field.Path) field.ErrorList {
	if errs := validate.RequiredValue(dvCtx, create, fldPath, &name, nil); len(errs) > 0 {
		return declarative(errs)
	}
	errs := validate.LongNameCaseless(dvCtx, create, fldPath, &name, nil)
	return declarative(append(errs, validate.MaxLength(dvCtx, create, fldPath, &name, nil, resourcev1.DriverNameMaxLength)...))
}

// validatePoolName: one or more DNS subdomains separated by slashes.
func validatePoolName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(part, fldPath)...)
	}
	return allErrs
}

func declarativePoolName(name string, fldPath *field.Path) field.ErrorList {
	if errs := validate.RequiredValue(dvCtx, create, fldPath, &name, nil); len(errs) > 0 {
		return declarative(errs)
	}
	return declarative(validate.ResourcePoolName(dvCtx, create, fldPath, &name, nil))
}

func declarativeUUID(uid *string, fldPath *field.Path) field.ErrorList {
	if uid == nil {
		return nil
	}
	return declarative(validate.UUID(dvCtx, create, fldPath, uid, nil))
}

// validateRequiredName checks a required name declared with a format
// that kube checks declaratively (format: validate.ShortName, LongName).
func declarativeRequiredName(name string, format func(context.Context, operation.Operation, *field.Path, *string, *string) field.ErrorList, fldPath *field.Path) field.ErrorList {
	if errs := validate.RequiredValue(dvCtx, create, fldPath, &name, nil); len(errs) > 0 {
		return declarative(errs)
	}
	return declarative(format(dvCtx, create, fldPath, &name, nil))
}

// validateQualifiedName: a C identifier, optionally behind a driver-like
// domain and a slash. (kube accepts a second slash; so does this.)
func validateQualifiedName(name resourcev1.QualifiedName, fldPath *field.Path) field.ErrorList {
	parts := strings.Split(string(name), "/")
	switch len(parts) {
	case 1:
		return validateCIdentifier(parts[0], fldPath)
	case 2:
		var allErrs field.ErrorList
		if parts[0] == "" {
			allErrs = append(allErrs, field.Invalid(fldPath, "", "the domain must not be empty"))
		} else {
			allErrs = append(allErrs, validateDriverName(parts[0], fldPath)...)
		}
		if parts[1] == "" {
			return append(allErrs, field.Invalid(fldPath, "", "the name must not be empty"))
		}
		return append(allErrs, validateCIdentifier(parts[1], fldPath)...)
	}
	return nil
}

func validateCIdentifier(id string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(id) > resourcev1.DeviceMaxIDLength {
		allErrs = append(allErrs, field.TooLong(fldPath, "", resourcev1.DeviceMaxIDLength))
	}
	for _, msg := range content.IsCIdentifier(id) {
		allErrs = append(allErrs, field.Invalid(fldPath, id, msg))
	}
	return allErrs
}

// validateRawExtension: required, at most max bytes (unless stored
// already), a JSON object.
func validateRawExtension(raw runtime.RawExtension, fldPath *field.Path, stored bool, max int) field.ErrorList {
	var v any
	switch {
	case len(raw.Raw) == 0:
		return field.ErrorList{field.Required(fldPath, "")}
	case !stored && len(raw.Raw) > max:
		return field.ErrorList{field.TooLong(fldPath, "", max)}
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return field.ErrorList{field.Invalid(fldPath, "<value omitted>", fmt.Sprintf("error parsing data as JSON: %v", err.Error()))}
	}
	if v == nil {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if _, ok := v.(map[string]any); !ok {
		return field.ErrorList{field.Invalid(fldPath, "<value omitted>", "must be a valid JSON object")}
	}
	return nil
}

// validateOpaqueConfiguration checks configuration for a driver.
func validateDeviceConfiguration(config resourcev1.DeviceConfiguration, fldPath *field.Path, stored bool) field.ErrorList {
	if config.Opaque == nil {
		return field.ErrorList{field.Required(fldPath.Child("opaque"), "")}
	}
	path := fldPath.Child("opaque")
	allErrs := declarativeDriverName(config.Opaque.Driver, path.Child("driver"))
	return append(allErrs, validateRawExtension(config.Opaque.Parameters, path.Child("parameters"), stored, resourcev1.OpaqueParametersMaxLength)...)
}

var (
	taintEffects       = sets.New(resourcev1.DeviceTaintEffectNoSchedule, resourcev1.DeviceTaintEffectNoExecute, resourcev1.DeviceTaintEffectNone)
	tolerationOperator = sets.New(resourcev1.DeviceTolerationOpEqual, resourcev1.DeviceTolerationOpExists)
)

// validateDeviceTaint checks a taint; its effect only when it is new or
// changed (old: the taint before an update, or nil).
func validateDeviceTaint(taint resourcev1.DeviceTaint, old *resourcev1.DeviceTaint, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabelName(taint.Key, fldPath.Child("key"))
	if taint.Value != "" {
		allErrs = append(allErrs, validateLabelValue(taint.Value, fldPath.Child("value"))...)
	}
	if old == nil || old.Effect != taint.Effect {
		effect := fldPath.Child("effect")
		if errs := validate.RequiredValue(dvCtx, create, effect, &taint.Effect, nil); len(errs) > 0 {
			return append(allErrs, declarative(errs)...)
		}
		allErrs = append(allErrs, declarative(validate.Enum(dvCtx, create, effect, &taint.Effect, nil, taintEffects, nil))...)
	}
	return allErrs
}

func validateDeviceToleration(t resourcev1.DeviceToleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Key != "" {
		allErrs = append(allErrs, declarative(validate.LabelKey(dvCtx, create, fldPath.Child("key"), &t.Key, nil))...)
	}
	switch t.Operator {
	case resourcev1.DeviceTolerationOpExists:
		if t.Value != "" {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("value"), t.Value, "must be empty for operator `Exists`"))
		}
	case resourcev1.DeviceTolerationOpEqual:
		allErrs = append(allErrs, validateLabelValue(t.Value, fldPath.Child("value"))...)
	case "":
		allErrs = append(allErrs, declarative(field.ErrorList{field.Required(fldPath.Child("operator"), "")})...)
	default:
		allErrs = append(allErrs, declarative(validate.Enum(dvCtx, create, fldPath.Child("operator"), &t.Operator, nil, tolerationOperator, nil))...)
	}
	if t.Effect != "" {
		allErrs = append(allErrs, declarative(validate.Enum(dvCtx, create, fldPath.Child("effect"), &t.Effect, nil, taintEffects, nil))...)
	}
	return allErrs
}

// validateBindingConditions checks a device's (or an allocation's)
// binding conditions and binding failure conditions: both or neither,
// no duplicates, no overlap.
func validateBindingConditions(conditions, failures []string, fldPath *field.Path) field.ErrorList {
	allErrs := validateSlice(conditions, resourcev1.BindingConditionsMaxSize, metav1validation.ValidateLabelName, fldPath.Child("bindingConditions"), sizeCovered)
	allErrs = append(allErrs, validateSlice(failures, resourcev1.BindingFailureConditionsMaxSize, metav1validation.ValidateLabelName, fldPath.Child("bindingFailureConditions"), sizeCovered)...)
	seen := sets.New[string]()
	for i, c := range conditions {
		if seen.Has(c) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("bindingConditions").Index(i), c))
		}
		seen.Insert(c)
	}
	all := sets.New(conditions...)
	seen = sets.New[string]()
	for i, c := range failures {
		if seen.Has(c) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Child("bindingFailureConditions").Index(i), c))
		}
		seen.Insert(c)
		if all.Has(c) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("bindingFailureConditions").Index(i), c, "bindingFailureConditions must not overlap with bindingConditions"))
		}
	}
	if len(conditions) == 0 && len(failures) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("bindingConditions"), conditions, "bindingConditions are required to use bindingFailureConditions"))
	}
	if len(failures) == 0 && len(conditions) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("bindingFailureConditions"), failures, "bindingFailureConditions are required to use bindingConditions"))
	}
	return allErrs
}
