package core

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var resourceQuotas = generic.Resource{
	Name: "resourcequotas", Singular: "resourcequota", Kind: "ResourceQuota", Namespaced: true,
	ShortNames: []string{"quota"},
	New:        generic.NewOf[corev1.ResourceQuota],
	NewList:    generic.NewOf[corev1.ResourceQuotaList],
	Strategy:   resourceQuotaStrategy{SpecStrategy: generic.SpecStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}},
	StatusStrategy: generic.StatusStrategy{Main: resourceQuotaStrategy{SpecStrategy: generic.SpecStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}}}, GroupVersion: "v1",
		Validate: validateResourceQuotaStatusUpdate},
	Table: resourceQuotaTable,
	// kube returns the deleted quota, not a Status.
	ReturnDeletedObject: true,
}

// resourceQuotaStrategy: the quota controller alone writes the status
// (through resourcequotas/status), which SpecStrategy resets and keeps.
type resourceQuotaStrategy struct {
	generic.SpecStrategy
	resetsStatus
}

// Default rounds quantities up to milli precision.
func (resourceQuotaStrategy) Default(obj runtime.Object) {
	q := obj.(*corev1.ResourceQuota)
	corevalidation.DefaultResourceList(q.Spec.Hard)
	corevalidation.DefaultResourceList(q.Status.Hard)
	corevalidation.DefaultResourceList(q.Status.Used)
}

func (resourceQuotaStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	q := obj.(*corev1.ResourceQuota)
	allErrs := corevalidation.ValidateObjectMeta(&q.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
}

func (resourceQuotaStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	q, oldQ := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&q.ObjectMeta, &oldQ.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateResourceQuotaSpec(&q.Spec, field.NewPath("spec"))...)
	newScopes, oldScopes := sets.New(q.Spec.Scopes...), sets.New(oldQ.Spec.Scopes...)
	if !newScopes.Equal(oldScopes) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), q.Spec.Scopes, apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

// WarningsOnCreate: a request above its limit for cpu, memory or storage.
func (resourceQuotaStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	hard := obj.(*corev1.ResourceQuota).Spec.Hard
	var warnings []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage} {
		reqName := corev1.ResourceName("requests." + string(name))
		req, hasReq := hard[reqName]
		if !hasReq && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			if req, hasReq = hard[name]; hasReq {
				reqName = name
			}
		}
		limName := corev1.ResourceName("limits." + string(name))
		if lim, hasLim := hard[limName]; hasReq && hasLim && req.Cmp(lim) > 0 {
			warnings = append(warnings, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)", reqName, req.String(), limName, lim.String()))
		}
	}
	return warnings
}

// validateResourceQuotaStatusUpdate checks a resourcequotas/status write:
// the metadata, and the hard and used lists.
func validateResourceQuotaStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	q, oldQ := obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&q.ObjectMeta, &oldQ.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateQuotaList(q.Status.Hard, field.NewPath("status", "hard"))...)
	return append(allErrs, validateQuotaList(q.Status.Used, field.NewPath("status", "used"))...)
}

// validateQuotaList checks the names and quantities of a quota list.
func validateQuotaList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for k, v := range list {
		p := fldPath.Key(string(k))
		allErrs = append(allErrs, corevalidation.ValidateResourceQuotaResourceName(k, p)...)
		allErrs = append(allErrs, corevalidation.ValidateResourceQuantityValue(k, v, p)...)
	}
	return allErrs
}

var (
	standardQuotaScopes = sets.New(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeVolumeAttributesClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity)
	podComputeQuotaResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory)
	conflictingScopes = [][2]corev1.ResourceQuotaScope{
		{corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort},
		{corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating},
	}
)

// scopeValidForResource: which resources a scope may limit.
func scopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return name == corev1.ResourcePods || podComputeQuotaResources.Has(name)
	case corev1.ResourceQuotaScopeBestEffort:
		return name == corev1.ResourcePods
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage
	}
	return true
}

func validateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateQuotaList(spec.Hard, fldPath.Child("hard"))
	hard := sets.KeySet(spec.Hard)
	isStandard := func(k corev1.ResourceName) bool {
		return corevalidation.StandardQuotaResources.Has(k) || corevalidation.IsQuotaHugePageResourceName(k)
	}
	if len(spec.Scopes) > 0 {
		scopesPath := fldPath.Child("scopes")
		for _, scope := range spec.Scopes {
			if !standardQuotaScopes.Has(scope) {
				allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope"))
			}
			for _, k := range sets.List(hard) {
				if isStandard(k) && !scopeValidForResource(scope, k) {
					allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "unsupported scope applied to resource"))
				}
			}
		}
		set := sets.New(spec.Scopes...)
		for _, pair := range conflictingScopes {
			if set.HasAll(pair[0], pair[1]) {
				allErrs = append(allErrs, field.Invalid(scopesPath, spec.Scopes, "conflicting scopes"))
			}
		}
	}
	if spec.ScopeSelector != nil {
		allErrs = append(allErrs, validateScopeSelector(spec, fldPath.Child("scopeSelector", "matchExpressions"), hard, isStandard)...)
	}
	return allErrs
}

func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fldPath *field.Path, hard sets.Set[corev1.ResourceName],
	isStandard func(corev1.ResourceName) bool) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !standardQuotaScopes.Has(req.ScopeName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, k := range sets.List(hard) {
			if isStandard(k) && !scopeValidForResource(req.ScopeName, k) {
				allErrs = append(allErrs, field.Invalid(fldPath, corevalidation.InternalValue(spec.ScopeSelector), "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeTerminating,
			corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator,
					"must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				allErrs = append(allErrs, field.Required(fldPath.Child("values"), "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values"), req.Values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
			}
		default:
			allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		seen.Insert(req.ScopeName)
	}
	for _, pair := range conflictingScopes {
		if seen.HasAll(pair[0], pair[1]) {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "conflicting scopes"))
		}
	}
	return allErrs
}

var resourceQuotaTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
	{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
	generic.AgeColumn,
}, func(q *corev1.ResourceQuota) ([]interface{}, error) {
	names := make([]string, 0, len(q.Status.Hard))
	for name := range q.Status.Hard {
		names = append(names, string(name))
	}
	sort.Strings(names)
	var requests, limits []string
	for _, name := range names {
		used, hard := q.Status.Used[corev1.ResourceName(name)], q.Status.Hard[corev1.ResourceName(name)]
		cell := fmt.Sprintf("%s: %s/%s", name, used.String(), hard.String())
		if prefix, _, ok := strings.Cut(name, "."); ok && prefix == "limits" {
			limits = append(limits, cell)
		} else {
			requests = append(requests, cell)
		}
	}
	return []interface{}{q.Name, strings.Join(requests, ", "), strings.Join(limits, ", "), generic.TranslateTimestampSince(q.CreationTimestamp)}, nil
})
