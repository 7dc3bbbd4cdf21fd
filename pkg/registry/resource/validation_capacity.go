package resource

import (
	"fmt"
	"math"
	"strconv"

	resourcev1 "k8s.io/api/resource/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks of a device's consumable capacity: only a device allocated
// many times has a request policy, which offers either valid values or a
// valid range, with a default among them. (Fractional ranges,
// DRAFractionalCapacityRange, are off by default in kube 1.37: values are
// compared as integers.)

// capacityValidValuesMax is kube's limit of a request policy's valid
// values (its internal API's CapacityRequestPolicyDiscreteMaxOptions).
const capacityValidValuesMax = 10

func validateCapacity(c resourcev1.DeviceCapacity, multipleAllocations bool, fldPath *field.Path) field.ErrorList {
	if c.RequestPolicy == nil {
		return nil
	}
	path := fldPath.Child("requestPolicy")
	if !multipleAllocations {
		return field.ErrorList{field.Forbidden(path, "allowMultipleAllocations must be true")}
	}
	p := c.RequestPolicy
	switch {
	case len(p.ValidValues) > 0 && p.ValidRange != nil:
		return field.ErrorList{field.Forbidden(path, `exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time`)}
	case len(p.ValidValues) > 0:
		if p.Default == nil {
			return field.ErrorList{field.Required(path.Child("default"), "required when validValues is defined")}
		}
		return validateValidValues(*p.Default, c.Value, p.ValidValues, path.Child("validValues"))
	case p.ValidRange != nil:
		if p.Default == nil {
			return field.ErrorList{field.Required(path.Child("default"), "required when validRange is defined")}
		}
		return validateValidRange(*p.Default, c.Value, *p.ValidRange, path.Child("validRange"))
	}
	return nil
}

func validateValidValues(def, capacity apiresource.Quantity, values []apiresource.Quantity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := 0; i+1 < len(values); i++ {
		if values[i].Cmp(values[i+1]) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i+1), values[i+1].String(), "values must be sorted in ascending order"))
		}
	}
	foundDefault := false
	allErrs = append(allErrs, validateSet(values, capacityValidValuesMax, func(v apiresource.Quantity, fldPath *field.Path) field.ErrorList {
		if v.Cmp(def) == 0 {
			foundDefault = true
		}
		if v.Cmp(capacity) > 0 {
			return field.ErrorList{field.Invalid(fldPath, v.String(), fmt.Sprintf("option is larger than capacity value: %s", capacity.String()))}
		}
		return nil
	}, func(v apiresource.Quantity) string { return strconv.FormatInt(v.Value(), 10) }, fldPath)...)
	if !foundDefault {
		allErrs = append(allErrs, field.Invalid(fldPath, def.String(), "default value is not valid according to the requestPolicy"))
	}
	return allErrs
}

func validateValidRange(def, capacity apiresource.Quantity, r resourcev1.CapacityRequestPolicyRange, fldPath *field.Path) field.ErrorList {
	if r.Min == nil {
		return field.ErrorList{field.Required(fldPath.Child("min"), "required when validRange is defined")}
	}
	var allErrs field.ErrorList
	if r.Min.Cmp(capacity) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("min"), r.Min.String(), fmt.Sprintf("min is larger than capacity value: %s", capacity.String())))
	}
	if def.Cmp(*r.Min) < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("default"), def.String(), fmt.Sprintf("default is less than min: %s", r.Min.String())))
	}
	if r.Max != nil {
		if r.Min.Cmp(*r.Max) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("max"), r.Min.String(), fmt.Sprintf("min is larger than max: %s", r.Max.String())))
		}
		if r.Max.Cmp(capacity) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("max"), r.Max.String(), fmt.Sprintf("max is larger than capacity value: %s", capacity.String())))
		}
		if def.Cmp(*r.Max) > 0 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("default"), def.String(), fmt.Sprintf("default is more than max: %s", r.Max.String())))
		}
	}
	if r.Step == nil {
		return allErrs
	}
	if r.Step.Sign() <= 0 {
		return append(allErrs, field.Invalid(fldPath.Child("step"), r.Step.String(), "must be greater than zero"))
	}
	oneStep := r.Min.DeepCopy()
	oneStep.Add(*r.Step)
	if oneStep.Cmp(capacity) > 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("step"), r.Step.String(), fmt.Sprintf("one step %s is larger than capacity value: %s", oneStep.String(), capacity.String())))
	}
	// Quantity.Value is only meaningful in [0, MaxInt64]: check the bounds
	// before the arithmetic.
	unsafe := false
	for _, q := range []struct {
		value *apiresource.Quantity
		name  string
	}{{&def, "default"}, {r.Min, "min"}, {r.Max, "max"}, {r.Step, "step"}} {
		if q.value == nil {
			continue
		}
		if errs := validateInt64Range(*q.value, fldPath.Child(q.name)); len(errs) > 0 {
			allErrs, unsafe = append(allErrs, errs...), true
		}
	}
	if unsafe {
		return allErrs
	}
	allErrs = append(allErrs, validateStep(def, *r.Min, *r.Step, fldPath.Child("step"))...)
	if r.Max != nil {
		allErrs = append(allErrs, validateStep(*r.Max, *r.Min, *r.Step, fldPath.Child("step"))...)
	}
	return allErrs
}

func validateInt64Range(q apiresource.Quantity, fldPath *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), apivalidation.IsNegativeErrorMsg)}
	}
	if q.CmpInt64(math.MaxInt64) > 0 {
		return field.ErrorList{field.Invalid(fldPath, q.String(), "must not be larger than 9223372036854775807")}
	}
	return nil
}

// validateStep: value is min plus a multiple of step.
func validateStep(value, min, step apiresource.Quantity, fldPath *field.Path) field.ErrorList {
	if (value.Value()-min.Value())%step.Value() != 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), fmt.Sprintf("value is not a multiple of a given step (%s) from (%s)", step.String(), min.String()))}
	}
	return nil
}
