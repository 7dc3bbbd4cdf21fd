package apps

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
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

var replicaSets = generic.Resource{
	Name: "replicasets", Singular: "replicaset", Kind: "ReplicaSet", Namespaced: true,
	ShortNames:     []string{"rs"},
	Categories:     []string{"all"},
	New:            func() runtime.Object { return &appsv1.ReplicaSet{} },
	NewList:        func() runtime.Object { return &appsv1.ReplicaSetList{} },
	Strategy:       rsMain,
	StatusStrategy: generic.StatusStrategy{Main: rsMain, GroupVersion: rsMain.APIVersion(), Validate: validateReplicaSetStatusUpdate},
	Scale:          generic.WorkloadScale[*appsv1.ReplicaSet]("apps/v1beta2", "apps/v1"),
	Table: generic.TablePrinter{
		Columns: podspec.WorkloadColumns(appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"], []metav1.TableColumnDefinition{
			{Name: "Desired", Type: "integer", Description: appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]},
			{Name: "Current", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]},
			{Name: "Ready", Type: "integer", Description: appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]},
		}),
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			rs := obj.(*appsv1.ReplicaSet)
			names, images := podspec.ContainerCells(rs.Spec.Template.Spec.Containers)
			return []interface{}{
				rs.Name, int64(ptr.Deref(rs.Spec.Replicas, 0)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
				generic.TranslateTimestampSince(rs.CreationTimestamp), names, images, metav1.FormatLabelSelector(rs.Spec.Selector),
			}, nil
		},
	},
}

// rsStrategy: deleting a replica set deletes its pods in the
// background.
type rsStrategy struct{ workload.Strategy }

var rsMain = rsStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)}

var _ rest.Defaulter = rsStrategy{}

// Default implements rest.Defaulter: 1 replica.
func (rsStrategy) Default(obj runtime.Object) {
	rs := obj.(*appsv1.ReplicaSet)
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptr.To[int32](1)
	}
	podspec.SetDefaultsPodSpec(&rs.Spec.Template.Spec)
}

func (rsStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	rs := obj.(*appsv1.ReplicaSet)
	allErrs := corevalidation.ValidateObjectMeta(&rs.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

func (rsStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	rs, oldRS := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &oldRS.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(rs.Spec.Selector, oldRS.Spec.Selector, field.NewPath("spec", "selector"))...)
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
	rs, oldRS := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &oldRS.ObjectMeta, field.NewPath("metadata"))
	s, p := rs.Status, field.NewPath("status")
	allErrs = append(allErrs, corevalidation.ValidateReplicaCounts(p, s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas, s.ObservedGeneration)...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	return allErrs
}
