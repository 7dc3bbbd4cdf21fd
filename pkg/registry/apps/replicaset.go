package apps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

var replicaSets = workload.Declare(workload.Kind[*appsv1.ReplicaSet, *appsv1.ReplicaSetList]{
	ShortName: "rs",
	Strategy:  rsStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)},
	Status:    generic.StatusStrategy{Validate: validateReplicaSetStatusUpdate},
	Scale:     generic.WorkloadScale[*appsv1.ReplicaSet]("apps/v1beta2", "apps/v1"),
	Table: workload.Table[*appsv1.ReplicaSet]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
			{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
			{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		},
		Cells: func(rs *appsv1.ReplicaSet) []interface{} {
			return []interface{}{int64(ptr.Deref(rs.Spec.Replicas, 0)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas)}
		},
		Template:    func(rs *appsv1.ReplicaSet) *corev1.PodTemplateSpec { return &rs.Spec.Template },
		SelectorDoc: appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"],
		Selector:    func(rs *appsv1.ReplicaSet) string { return metav1.FormatLabelSelector(rs.Spec.Selector) },
	},
})

// rsStrategy: deleting a replica set deletes its pods in the
// background.
type rsStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter: 1 replica.
func (rsStrategy) Default(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
	podspec.SetDefaultsPodSpec(&rs.Spec.Template.Spec)
}

func (rsStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(workload.ValidateMeta(obj), validateReplicaSetSpec(&obj.(*appsv1.ReplicaSet).Spec, specPath)...)
}

// ValidateUpdate: the selector never changes.
func (rsStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	spec := &obj.(*appsv1.ReplicaSet).Spec
	allErrs := append(workload.ValidateMetaUpdate(obj, old), validateReplicaSetSpec(spec, specPath)...)
	return append(allErrs, workload.ValidateSelectorUnchanged(spec.Selector, old.(*appsv1.ReplicaSet).Spec.Selector)...)
}

func validateReplicaSetSpec(spec *appsv1.ReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegative(int64(ptr.Deref(spec.Replicas, 0)), fldPath.Child("replicas"))
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	// kube's message names deployments here too.
	allErrs = append(allErrs, validateSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	return append(allErrs, validateTemplateForSelector(&spec.Template, spec.Selector, "ReplicaSet", fldPath)...)
}

// validateReplicaSetStatusUpdate validates a write of replicasets/status.
func validateReplicaSetStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, p := obj.(*appsv1.ReplicaSet).Status, field.NewPath("status")
	allErrs := append(workload.ValidateMetaUpdate(obj, old), corevalidation.ValidateReplicaCounts(p, s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration)...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	return allErrs
}
