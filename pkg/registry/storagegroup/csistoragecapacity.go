package storagegroup

import (
	"context"
	"fmt"
	"maps"
	"slices"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var csiStorageCapacities = generic.Resource{
	Name: "csistoragecapacities", Singular: "csistoragecapacity", Kind: "CSIStorageCapacity", Namespaced: true,
	New: generic.NewOf[storagev1.CSIStorageCapacity], NewList: generic.NewOf[storagev1.CSIStorageCapacityList],
	Strategy: csiStorageCapacityStrategy{generic.BaseStrategy{Namespaced: true}},
	// kube has no printer for capacities: its default table.
	Table: generic.DefaultTableConvertor(schema.GroupResource{Group: storagev1.GroupName, Resource: "csistoragecapacities"}),
}

// csiStorageCapacityStrategy is kube's: a driver's external provisioner
// publishes capacities per topology segment and class; both are what the
// capacity was measured for, so they cannot change.
type csiStorageCapacityStrategy struct{ generic.BaseStrategy }

func (csiStorageCapacityStrategy) AllowUnconditionalUpdate() bool { return false }

func (csiStorageCapacityStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateCSIStorageCapacity(obj.(*storagev1.CSIStorageCapacity), false)
}

// ValidateUpdate keeps accepting label values kube once let through in an
// existing object's selector.
func (csiStorageCapacityStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*storagev1.CSIStorageCapacity), old.(*storagev1.CSIStorageCapacity)
	opts := metav1validation.LabelSelectorValidationOptions{}
	oldInvalid := len(metav1validation.ValidateLabelSelector(oldC.NodeTopology, opts, nil)) > 0
	allErrs := validateCSIStorageCapacity(c, oldInvalid)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))...)
	if !equality.Semantic.DeepEqual(c.NodeTopology, oldC.NodeTopology) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("nodeTopology"), c.NodeTopology, apivalidation.FieldImmutableErrorMsg))
	}
	if c.StorageClassName != oldC.StorageClassName {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

func (csiStorageCapacityStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return nodeSelectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

func (csiStorageCapacityStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return nodeSelectorWarnings(obj.(*storagev1.CSIStorageCapacity).NodeTopology, field.NewPath("nodeTopology"))
}

func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity, allowInvalidLabelValues bool) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&c.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabelValues}
	allErrs = append(allErrs, metav1validation.ValidateLabelSelector(c.NodeTopology, opts, field.NewPath("nodeTopology"))...)
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), apivalidation.IsNegativeErrorMsg))
	}
	return allErrs
}

// nodeSelectorWarnings names deprecated node labels in a selector.
func nodeSelectorWarnings(selector *metav1.LabelSelector, fldPath *field.Path) []string {
	if selector == nil {
		return nil
	}
	var warnings []string
	for i, e := range selector.MatchExpressions {
		if msg, ok := podspec.DeprecatedNodeLabel(e.Key); ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s is %s", fldPath.Child("matchExpressions").Index(i).Child("key"), e.Key, msg))
		}
	}
	for _, label := range slices.Sorted(maps.Keys(selector.MatchLabels)) {
		if msg, ok := podspec.DeprecatedNodeLabel(label); ok {
			warnings = append(warnings, fmt.Sprintf("%s: %s", fldPath.Child("matchLabels").Child(label), msg))
		}
	}
	return warnings
}
