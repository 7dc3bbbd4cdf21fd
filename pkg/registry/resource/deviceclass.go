package resource

import (
	"context"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var deviceClasses = generic.Resource{
	Name: "deviceclasses", Singular: "deviceclass", Kind: "DeviceClass",
	New: generic.NewOf[resourcev1.DeviceClass], NewList: generic.NewOf[resourcev1.DeviceClassList],
	Strategy:            deviceClassStrategy{},
	ReturnDeletedObject: true,
	Table:               generic.NameAgeTable,
}

// deviceClassStrategy: a class counts the changes of its spec in its
// generation.
type deviceClassStrategy struct{ generic.GenerationStrategy }

func (deviceClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	c := obj.(*resourcev1.DeviceClass)
	allErrs := validateClassMeta(&c.ObjectMeta)
	return declarativeLast(append(allErrs, validateDeviceClassSpec(&c.Spec, nil, field.NewPath("spec"))...))
}

func (deviceClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*resourcev1.DeviceClass), old.(*resourcev1.DeviceClass)
	allErrs := validateClassMeta(&c.ObjectMeta)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))...)
	return declarativeLast(append(allErrs, validateDeviceClassSpec(&c.Spec, &oldC.Spec, field.NewPath("spec"))...))
}

// validateClassMeta checks a class's metadata; kube checks its name
// (a DNS subdomain) declaratively.
func validateClassMeta(m *metav1.ObjectMeta) field.ErrorList {
	prefixOnly := func(name string, prefix bool) []string {
		if prefix {
			return apivalidation.NameIsDNSSubdomain(name, true)
		}
		return nil
	}
	allErrs := corevalidation.ValidateObjectMeta(m, false, prefixOnly, field.NewPath("metadata"))
	if m.Name != "" {
		allErrs = append(allErrs, declarative(validate.LongName(dvCtx, create, field.NewPath("metadata", "name"), &m.Name, nil))...)
	}
	return allErrs
}

// validateDeviceClassSpec checks a class; selectors and configuration
// that did not change were valid when stored (old: the spec before an
// update, or nil).
func validateDeviceClassSpec(spec, old *resourcev1.DeviceClassSpec, fldPath *field.Path) field.ErrorList {
	storedSelectors := old != nil && apiequality.Semantic.DeepEqual(spec.Selectors, old.Selectors)
	allErrs := validateSelectors(spec.Selectors, fldPath.Child("selectors"), storedSelectors)
	storedConfig := old != nil && apiequality.Semantic.DeepEqual(spec.Config, old.Config)
	allErrs = append(allErrs, validateSlice(spec.Config, resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceClassConfiguration, fldPath *field.Path) field.ErrorList {
		return validateDeviceConfiguration(c.DeviceConfiguration, fldPath, storedConfig)
	}, fldPath.Child("config"), sizeCovered)...)
	if name := spec.ExtendedResourceName; name != nil {
		allErrs = append(allErrs, declarative(validate.ExtendedResourceName(dvCtx, create, fldPath.Child("extendedResourceName"), name, nil))...)
	}
	return allErrs
}
