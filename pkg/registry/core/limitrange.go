package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// limitRanges have no printer in kube: tables show NAME and CREATED AT.
var limitRanges = generic.Resource{
	Name: "limitranges", Singular: "limitrange", Kind: "LimitRange", Namespaced: true,
	ShortNames: []string{"limits"},
	New:        generic.NewOf[corev1.LimitRange],
	NewList:    generic.NewOf[corev1.LimitRangeList],
	Strategy:   limitRangeStrategy{generic.BaseStrategy{Namespaced: true}},
}

// limitRangeStrategy: limit ranges may be created by PUT, and a create
// without a name gets a random one.
type limitRangeStrategy struct{ generic.BaseStrategy }

func (limitRangeStrategy) AllowCreateOnUpdate() bool { return true }

// Default is kube's: a container limit's default falls back to max, its
// default request to the default, then to min; quantities round up to
// milli precision.
func (limitRangeStrategy) Default(obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		for _, list := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			corevalidation.DefaultResourceList(list)
		}
	}
}

// fillMissing copies into dst the quantities of src it lacks.
func fillMissing(dst, src corev1.ResourceList) {
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v.DeepCopy()
		}
	}
}

func (limitRangeStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	lr := obj.(*corev1.LimitRange)
	if lr.Name == "" {
		lr.Name = uuid.NewString()
	}
}

func (limitRangeStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateLimitRange(obj.(*corev1.LimitRange))
}

// ValidateUpdate is kube's: the update is validated as a new object.
func (limitRangeStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validateLimitRange(obj.(*corev1.LimitRange))
}

var standardLimitRangeTypes = sets.New(corev1.LimitTypePod, corev1.LimitTypeContainer, corev1.LimitTypePersistentVolumeClaim)

func validateLimitRange(lr *corev1.LimitRange) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&lr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	seenTypes := map[corev1.LimitType]bool{}
	fldPath := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		idxPath := fldPath.Index(i)
		limit := &lr.Spec.Limits[i]
		allErrs = append(allErrs, validateLimitRangeTypeName(limit.Type, idxPath.Child("type"))...)
		if seenTypes[limit.Type] {
			allErrs = append(allErrs, field.Duplicate(idxPath.Child("type"), limit.Type))
		}
		seenTypes[limit.Type] = true
		allErrs = append(allErrs, validateLimitRangeItem(limit, idxPath)...)
	}
	return allErrs
}

func validateLimitRangeTypeName(value corev1.LimitType, fldPath *field.Path) field.ErrorList {
	if allErrs := corevalidation.ValidateQualifiedName(string(value), fldPath); len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(value), "/") && !standardLimitRangeTypes.Has(value) {
		return field.ErrorList{field.Invalid(fldPath, value, "must be a standard limit type or fully qualified")}
	}
	return nil
}

func validateLimitRangeItem(limit *corev1.LimitRangeItem, idxPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	keys := sets.New[string]()
	collect := func(list corev1.ResourceList, name string) map[string]resource.Quantity {
		out := map[string]resource.Quantity{}
		for k, q := range list {
			p := idxPath.Child(name).Key(string(k))
			if limit.Type == corev1.LimitTypePod || limit.Type == corev1.LimitTypeContainer {
				allErrs = append(allErrs, corevalidation.ValidateContainerResourceName(k, p)...)
			} else {
				allErrs = append(allErrs, corevalidation.ValidateResourceName(k, p)...)
			}
			keys.Insert(string(k))
			out[string(k)] = q
		}
		return out
	}
	maxQ, minQ := collect(limit.Max, "max"), collect(limit.Min, "min")
	defaults, defaultRequests := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	if limit.Type == corev1.LimitTypePod {
		if len(limit.Default) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("default"), "may not be specified when `type` is 'Pod'"))
		}
		if len(limit.DefaultRequest) > 0 {
			allErrs = append(allErrs, field.Forbidden(idxPath.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
		}
	} else {
		defaults, defaultRequests = collect(limit.Default, "default"), collect(limit.DefaultRequest, "defaultRequest")
	}
	if limit.Type == corev1.LimitTypePersistentVolumeClaim {
		_, hasMin := limit.Min[corev1.ResourceStorage]
		_, hasMax := limit.Max[corev1.ResourceStorage]
		if !hasMin && !hasMax {
			allErrs = append(allErrs, field.Required(idxPath.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
		}
	}
	ratios := collect(limit.MaxLimitRequestRatio, "maxLimitRequestRatio")
	for _, k := range sets.List(keys) {
		allErrs = append(allErrs, compareLimits(k, idxPath, minQ, maxQ, defaults, defaultRequests, ratios)...)
	}
	return allErrs
}

// compareLimits checks that min <= defaultRequest <= default <= max hold
// for resource k, and that the ratio fits.
func compareLimits(k string, idxPath *field.Path, minQ, maxQ, defaults, defaultRequests, ratios map[string]resource.Quantity) field.ErrorList {
	var allErrs field.ErrorList
	lo, hasMin := minQ[k]
	hi, hasMax := maxQ[k]
	def, hasDefault := defaults[k]
	req, hasRequest := defaultRequests[k]
	ratio, hasRatio := ratios[k]
	if hasMin && hasMax && lo.Cmp(hi) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("min").Key(k), lo, fmt.Sprintf("min value %s is greater than max value %s", lo.String(), hi.String())))
	}
	if hasRequest && hasMin && lo.Cmp(req) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("defaultRequest").Key(k), req, fmt.Sprintf("min value %s is greater than default request value %s", lo.String(), req.String())))
	}
	if hasRequest && hasMax && req.Cmp(hi) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("defaultRequest").Key(k), req, fmt.Sprintf("default request value %s is greater than max value %s", req.String(), hi.String())))
	}
	if hasRequest && hasDefault && req.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("defaultRequest").Key(k), req, fmt.Sprintf("default request value %s is greater than default limit value %s", req.String(), def.String())))
	}
	if hasDefault && hasMin && lo.Cmp(def) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("default").Key(k), lo, fmt.Sprintf("min value %s is greater than default value %s", lo.String(), def.String())))
	}
	if hasDefault && hasMax && def.Cmp(hi) > 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("default").Key(k), hi, fmt.Sprintf("default value %s is greater than max value %s", def.String(), hi.String())))
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
	}
	if hasRatio && hasMin && hasMax {
		r, l, h := float64(ratio.Value()), lo.Value(), hi.Value()
		if ratio.Value() < resource.MaxMilliValue && l < resource.MaxMilliValue && h < resource.MaxMilliValue {
			r, l, h = float64(ratio.MilliValue())/1000, lo.MilliValue(), hi.MilliValue()
		}
		if limitRatio := float64(h) / float64(l); r > limitRatio {
			allErrs = append(allErrs, field.Invalid(idxPath.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limitRatio)))
		}
	}
	// Resources that cannot be overcommitted (hugepages, extended ones)
	// need default and default request to agree.
	name := corev1.ResourceName(k)
	overcommit := corevalidation.IsNativeResource(name) && !corevalidation.IsHugePageResourceName(name)
	if !overcommit && hasDefault && hasRequest && def.Cmp(req) != 0 {
		allErrs = append(allErrs, field.Invalid(idxPath.Child("defaultRequest").Key(k), req, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), k)))
	}
	return allErrs
}
