package storagegroup

import (
	"context"
	"reflect"

	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var volumeAttributesClasses = generic.Resource{
	Name: "volumeattributesclasses", Singular: "volumeattributesclass", Kind: "VolumeAttributesClass",
	ShortNames: []string{"vac"},
	New:        generic.NewOf[storagev1.VolumeAttributesClass], NewList: generic.NewOf[storagev1.VolumeAttributesClassList],
	Strategy: volumeAttributesClassStrategy{},
	// kube returns the deleted object, not a Status.
	ReturnDeletedObject: true,
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "DriverName", Type: "string", Description: storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]},
		func(c *storagev1.VolumeAttributesClass) interface{} { return c.DriverName }),
}

// VACProtectionFinalizer is what kube's StorageObjectInUseProtection
// admission plugin (admission.StorageObjectInUseProtection) adds to every
// new class; kube-controller-manager's vac-protection controller removes
// it once no volume or claim uses it.
const VACProtectionFinalizer = "kubernetes.io/vac-protection"

type volumeAttributesClassStrategy struct{ generic.BaseStrategy }

func (volumeAttributesClassStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateVolumeAttributesClass(obj.(*storagev1.VolumeAttributesClass))
}

// ValidateUpdate: a class's driver and parameters cannot change.
func (volumeAttributesClassStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	c, oldC := obj.(*storagev1.VolumeAttributesClass), old.(*storagev1.VolumeAttributesClass)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&c.ObjectMeta, &oldC.ObjectMeta, field.NewPath("metadata"))
	if c.DriverName != oldC.DriverName {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
	}
	if !reflect.DeepEqual(c.Parameters, oldC.Parameters) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	return append(allErrs, validateVolumeAttributesClass(c)...)
}

func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&c.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, requiredValue(field.NewPath("driverName"), c.DriverName)...)
	allErrs = append(allErrs, validateProvisioner(c.DriverName, field.NewPath("driverName"))...)
	return append(allErrs, validateParameters(c.Parameters, false, field.NewPath("parameters"))...)
}
