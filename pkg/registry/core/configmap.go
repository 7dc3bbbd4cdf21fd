package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var configMaps = generic.Resource{
	Name: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true,
	ShortNames: []string{"cm"},
	New:        generic.NewOf[corev1.ConfigMap],
	NewList:    generic.NewOf[corev1.ConfigMapList],
	Strategy:   configMapStrategy{generic.BaseStrategy{Namespaced: true}},
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Data", Type: "string", Description: corev1.ConfigMap{}.SwaggerDoc()["data"]},
		func(cm *corev1.ConfigMap) interface{} { return int64(len(cm.Data) + len(cm.BinaryData)) }),
}

type configMapStrategy struct{ generic.BaseStrategy }

func (configMapStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	cm := obj.(*corev1.ConfigMap)
	allErrs := corevalidation.ValidateObjectMeta(&cm.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateConfigMapData(cm)...)
}

func (configMapStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	cm, oldCM := obj.(*corev1.ConfigMap), old.(*corev1.ConfigMap)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&cm.ObjectMeta, &oldCM.ObjectMeta, field.NewPath("metadata"))
	if oldCM.Immutable != nil && *oldCM.Immutable {
		if cm.Immutable == nil || !*cm.Immutable {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !equalStringMaps(cm.Data, oldCM.Data) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !equalBytesMaps(cm.BinaryData, oldCM.BinaryData) {
			allErrs = append(allErrs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(allErrs, validateConfigMapData(cm)...)
}

// validateConfigMapData checks keys and the total size, as kube does.
func validateConfigMapData(cm *corev1.ConfigMap) field.ErrorList {
	var allErrs field.ErrorList
	total := 0
	for key, value := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("data").Key(key), key, msg))
		}
		if _, dup := cm.BinaryData[key]; dup {
			allErrs = append(allErrs, field.Invalid(field.NewPath("data").Key(key), key, "duplicate of key present in binaryData"))
		}
		total += len(value)
	}
	for key, value := range cm.BinaryData {
		for _, msg := range validation.IsConfigMapKey(key) {
			allErrs = append(allErrs, field.Invalid(field.NewPath("binaryData").Key(key), key, msg))
		}
		total += len(value)
	}
	if total > corev1.MaxSecretSize {
		allErrs = append(allErrs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return allErrs
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func equalBytesMaps(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || string(bv) != string(v) {
			return false
		}
	}
	return true
}
