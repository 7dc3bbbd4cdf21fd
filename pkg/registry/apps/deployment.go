package apps

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/workload"
)

var deployments = workload.Declare(workload.Kind[*appsv1.Deployment, *appsv1.DeploymentList]{
	ShortName: "deploy",
	Strategy:  deploymentStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)},
	Status:    generic.StatusStrategy{Validate: validateDeploymentStatusUpdate, KeepLabels: true},
	Scale:     generic.WorkloadScale[*appsv1.Deployment]("apps/v1beta1", "apps/v1beta2", "apps/v1"),
	Table: workload.Table[*appsv1.Deployment]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
			{Name: "Up-to-date", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]},
			{Name: "Available", Type: "string", Description: appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]},
		},
		Cells: func(d *appsv1.Deployment) []interface{} {
			return []interface{}{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, ptr.Deref(d.Spec.Replicas, 0)),
				int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas)}
		},
		Template:    func(d *appsv1.Deployment) *corev1.PodTemplateSpec { return &d.Spec.Template },
		SelectorDoc: appsv1.DeploymentSpec{}.SwaggerDoc()["selector"],
		Selector: func(d *appsv1.Deployment) string {
			if selector, err := selectorString(d.Spec.Selector); err == nil {
				return selector
			}
			return "<invalid>"
		},
	},
})

// deploymentStrategy: deleting a deployment deletes its replica sets in
// the background.
type deploymentStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter: 1 replica, a rolling update of 25%
// surge and 25% unavailable, 10 old replica sets, 600s to progress.
func (deploymentStrategy) Default(obj runtime.Object) {
	d := obj.(*appsv1.Deployment)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	s := &d.Spec.Strategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
	podspec.SetDefaultsPodSpec(&d.Spec.Template.Spec)
}

// PrepareForUpdate bumps the generation on spec changes and, unlike the
// other workloads, on annotation changes (kubectl rollout uses them).
func (s deploymentStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	if !apiequality.Semantic.DeepEqual(obj.(*appsv1.Deployment).Annotations, old.(*appsv1.Deployment).Annotations) {
		generic.BumpGeneration(obj, old)
	}
}

func (deploymentStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(workload.ValidateMeta(obj), validateDeploymentSpec(&obj.(*appsv1.Deployment).Spec, specPath)...)
}

func (deploymentStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	spec, oldSpec := &obj.(*appsv1.Deployment).Spec, &old.(*appsv1.Deployment).Spec
	allErrs := append(workload.ValidateMetaUpdate(obj, old), validateDeploymentSpec(spec, specPath)...)
	return append(allErrs, workload.ValidateSelectorUnchanged(spec.Selector, oldSpec.Selector)...)
}

func validateDeploymentSpec(spec *appsv1.DeploymentSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegative(int64(ptr.Deref(spec.Replicas, 0)), fldPath.Child("replicas"))
	allErrs = append(allErrs, validateSelector(spec.Selector, "deployment", fldPath.Child("selector"))...)
	allErrs = append(allErrs, validateTemplateForSelector(&spec.Template, spec.Selector, "ReplicaSet", fldPath)...)
	allErrs = append(allErrs, validateDeploymentStrategy(&spec.Strategy, fldPath.Child("strategy"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, validateOptionalNonnegative(spec.RevisionHistoryLimit, fldPath.Child("revisionHistoryLimit"))...)
	if p := spec.ProgressDeadlineSeconds; p != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*p), fldPath.Child("progressDeadlineSeconds"))...)
		if *p <= spec.MinReadySeconds {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("progressDeadlineSeconds"), *p, "must be greater than minReadySeconds"))
		}
	}
	return allErrs
}

// kubeDeploymentStrategy is the strategy as kube prints it in messages:
// its internal type, without JSON names.
type kubeDeploymentStrategy struct {
	Type          appsv1.DeploymentStrategyType
	RollingUpdate *struct{ MaxUnavailable, MaxSurge intstr.IntOrString }
}

func validateDeploymentStrategy(s *appsv1.DeploymentStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(fldPath.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
		return nil
	case appsv1.RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		p := fldPath.Child("rollingUpdate")
		maxUnavailable, maxSurge := intOrStringPtr(s.RollingUpdate.MaxUnavailable), intOrStringPtr(s.RollingUpdate.MaxSurge)
		allErrs := corevalidation.ValidatePositiveIntOrPercent(maxUnavailable, p.Child("maxUnavailable"))
		allErrs = append(allErrs, corevalidation.ValidatePositiveIntOrPercent(maxSurge, p.Child("maxSurge"))...)
		if corevalidation.IntOrPercentValue(maxUnavailable) == 0 && corevalidation.IntOrPercentValue(maxSurge) == 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxUnavailable"), maxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
		return append(allErrs, corevalidation.ValidateNotMoreThan100Percent(maxUnavailable, p.Child("maxUnavailable"))...)
	}
	shown := kubeDeploymentStrategy{Type: s.Type}
	if ru := s.RollingUpdate; ru != nil {
		shown.RollingUpdate = &struct{ MaxUnavailable, MaxSurge intstr.IntOrString }{intOrStringPtr(ru.MaxUnavailable), intOrStringPtr(ru.MaxSurge)}
	}
	return field.ErrorList{field.NotSupported(fldPath, shown, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
}

// validateDeploymentStatusUpdate validates a write of deployments/status.
func validateDeploymentStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.Deployment).Status, old.(*appsv1.Deployment).Status
	p := field.NewPath("status")
	allErrs := append(workload.ValidateMetaUpdate(obj, old), validateCounters(p,
		counter{"observedGeneration", s.ObservedGeneration}, counter{"replicas", int64(s.Replicas)},
		counter{"updatedReplicas", int64(s.UpdatedReplicas)}, counter{"readyReplicas", int64(s.ReadyReplicas)},
		counter{"availableReplicas", int64(s.AvailableReplicas)}, counter{"unavailableReplicas", int64(s.UnavailableReplicas)})...)
	if s.TerminatingReplicas != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*s.TerminatingReplicas), p.Child("terminatingReplicas"))...)
	}
	if s.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	const replicas = "status.replicas"
	allErrs = append(allErrs, validateNotAbove(p, "updatedReplicas", s.UpdatedReplicas, s.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "readyReplicas", s.ReadyReplicas, s.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "availableReplicas", s.AvailableReplicas, s.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "availableReplicas", s.AvailableReplicas, s.ReadyReplicas, "readyReplicas")...)
	return append(allErrs, validateCollisionCount(p, s.CollisionCount, oldS.CollisionCount)...)
}
