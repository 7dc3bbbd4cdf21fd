package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var podTemplates = generic.Resource{
	Name: "podtemplates", Singular: "podtemplate", Kind: "PodTemplate", Namespaced: true,
	New:                 generic.NewOf[corev1.PodTemplate],
	NewList:             generic.NewOf[corev1.PodTemplateList],
	Strategy:            podTemplateStrategy{generic.BaseStrategy{Namespaced: true}},
	ReturnDeletedObject: true,
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Containers", Type: "string", Description: podspec.ContainersColumnDescription},
		{Name: "Images", Type: "string", Description: podspec.ImagesColumnDescription},
		{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
	}, func(t *corev1.PodTemplate) ([]interface{}, error) {
		names, images := podspec.ContainerCells(t.Template.Spec.Containers)
		return []interface{}{t.Name, names, images, labels.FormatLabels(t.Template.Labels)}, nil
	}),
}

type podTemplateStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = podTemplateStrategy{}

// Default implements rest.Defaulter.
func (podTemplateStrategy) Default(obj runtime.Object) {
	podspec.SetDefaultsPodSpec(&obj.(*corev1.PodTemplate).Template.Spec)
}

func (podTemplateStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
}

// PrepareForUpdate bumps the generation when the template changes.
func (podTemplateStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if !apiequality.Semantic.DeepEqual(obj.(*corev1.PodTemplate).Template, old.(*corev1.PodTemplate).Template) {
		generic.BumpGeneration(obj, old)
	}
}

func (podTemplateStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	t := obj.(*corev1.PodTemplate)
	allErrs := corevalidation.ValidateObjectMeta(&t.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, podspec.ValidatePodTemplateSpec(&t.Template, field.NewPath("template"))...)
}

func (podTemplateStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	t, oldT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&t.ObjectMeta, &oldT.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, podspec.ValidatePodTemplateSpec(&t.Template, field.NewPath("template"))...)
}

func (podTemplateStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return podspec.PodTemplateWarnings(field.NewPath("template"), &obj.(*corev1.PodTemplate).Template)
}

// WarningsOnUpdate warns only when the template changed (PrepareForUpdate
// then bumped the generation): an unrelated write repeats none.
func (podTemplateStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	t, oldT := obj.(*corev1.PodTemplate), old.(*corev1.PodTemplate)
	if t.Generation == oldT.Generation {
		return nil
	}
	return podspec.PodTemplateWarnings(field.NewPath("template"), &t.Template)
}
