package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

var replicationControllers = workload.Declare(workload.Kind[*corev1.ReplicationController, *corev1.ReplicationControllerList]{
	ShortName:            "rc",
	Strategy:             rcStrategy{workload.NewStrategy("v1", rest.OrphanDependents)},
	Status:               generic.StatusStrategy{Validate: validateRCStatusUpdate},
	AttrFunc:             rcAttrs,
	FieldLabelConversion: generic.SupportedFieldLabels("status.replicas"),
	Scale:                generic.WorkloadScale[*corev1.ReplicationController](),
	Table: workload.Table[*corev1.ReplicationController]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Desired", Type: "integer", Description: corev1.ReplicationControllerSpec{}.SwaggerDoc()["replicas"]},
			{Name: "Current", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["replicas"]},
			{Name: "Ready", Type: "integer", Description: corev1.ReplicationControllerStatus{}.SwaggerDoc()["readyReplicas"]},
		},
		Cells: func(rc *corev1.ReplicationController) []interface{} {
			return []interface{}{int64(ptr.Deref(rc.Spec.Replicas, 0)), int64(rc.Status.Replicas), int64(rc.Status.ReadyReplicas)}
		},
		Template:    func(rc *corev1.ReplicationController) *corev1.PodTemplateSpec { return rc.Spec.Template },
		SelectorDoc: corev1.ReplicationControllerSpec{}.SwaggerDoc()["selector"],
		Selector:    func(rc *corev1.ReplicationController) string { return labels.FormatLabels(rc.Spec.Selector) },
	},
})

var rcAttrs = generic.AttrFuncOf("a replication controller", true, func(rc *corev1.ReplicationController, set fields.Set) {
	set["status.replicas"] = fmt.Sprint(rc.Status.Replicas)
})

// rcStrategy: deleting a replication controller through v1 orphans its
// pods unless the client asks otherwise, for compatibility with the oldest
// clients.
type rcStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter: the selector and the labels default
// to the template's labels, replicas to 1.
func (rcStrategy) Default(obj runtime.Object) {
	rc := obj.(*corev1.ReplicationController)
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = t.Labels
		}
		if len(rc.Labels) == 0 {
			rc.Labels = t.Labels
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptr.To[int32](1)
	}
	if rc.Spec.Template != nil {
		podspec.SetDefaultsPodSpec(&rc.Spec.Template.Spec)
	}
}

func (rcStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(workload.ValidateMeta(obj), validateRCSpec(&obj.(*corev1.ReplicationController).Spec, field.NewPath("spec"))...)
}

// ValidateUpdate: unlike the apps workloads', an RC's selector may change.
func (rcStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return append(workload.ValidateMetaUpdate(obj, old), validateRCSpec(&obj.(*corev1.ReplicationController).Spec, field.NewPath("spec"))...)
}

// validateRCSpec validates a replication controller's spec. kube checks
// replicas and minReadySeconds declaratively, after the rest: their errors
// come last.
func validateRCSpec(spec *corev1.ReplicationControllerSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	selector := labels.Set(spec.Selector).AsSelector()
	if selector.Empty() {
		allErrs = append(allErrs, field.Required(fldPath.Child("selector"), ""))
	}
	if spec.Template == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("template"), ""))
	} else {
		allErrs = append(allErrs, podspec.ValidatePodTemplateSpecForWorkload(spec.Template, func(l map[string]string) (bool, bool) {
			return selector.Matches(labels.Set(l)), selector.Empty()
		}, "ReplicationController", fldPath.Child("template"))...)
	}
	if spec.Replicas == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("replicas"), ""))
	} else {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(*spec.Replicas), fldPath.Child("replicas"))...)
	}
	return append(allErrs, apivalidation.ValidateNonnegativeField(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
}

// WarningsOnCreate warns about names that make odd pod names and about
// the template's dubious fields.
func (rcStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	rc := obj.(*corev1.ReplicationController)
	return append(workload.NameWarnings(rc.Name), podspec.PodTemplateWarnings(field.NewPath("spec", "template"), rc.Spec.Template)...)
}

// WarningsOnUpdate warns when the spec changed. kube v1.37 passes the
// templates swapped here, so it warns about the template being replaced,
// not the new one (seen on v1.37.2; a fix is proposed upstream,
// kubernetes/kubernetes#142443). We answer as it does, so that clients
// see the same headers.
func (rcStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	rc, oldRC := obj.(*corev1.ReplicationController), old.(*corev1.ReplicationController)
	if rc.Generation == oldRC.Generation {
		return nil
	}
	return podspec.PodTemplateWarnings(field.NewPath("spec", "template"), oldRC.Spec.Template)
}

// validateRCStatusUpdate validates a write of replicationcontrollers/status.
func validateRCStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, p := obj.(*corev1.ReplicationController).Status, field.NewPath("status")
	return append(workload.ValidateMetaUpdate(obj, old), corevalidation.ValidateReplicaCounts(p, s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration)...)
}
