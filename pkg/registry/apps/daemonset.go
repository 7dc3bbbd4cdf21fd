package apps

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
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

var daemonSets = workload.Declare(workload.Kind[*appsv1.DaemonSet, *appsv1.DaemonSetList]{
	ShortName: "ds",
	Strategy:  daemonSetStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)},
	Status:    generic.StatusStrategy{Validate: validateDaemonSetStatusUpdate},
	Table: workload.Table[*appsv1.DaemonSet]{
		Columns: []metav1.TableColumnDefinition{
			{Name: "Desired", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]},
			{Name: "Current", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]},
			{Name: "Ready", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]},
			{Name: "Up-to-date", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]},
			{Name: "Available", Type: "integer", Description: appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]},
			{Name: "Node Selector", Type: "string", Description: corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]},
		},
		Cells: func(ds *appsv1.DaemonSet) []interface{} {
			s := ds.Status
			return []interface{}{int64(s.DesiredNumberScheduled), int64(s.CurrentNumberScheduled), int64(s.NumberReady),
				int64(s.UpdatedNumberScheduled), int64(s.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector)}
		},
		Template:    func(ds *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &ds.Spec.Template },
		SelectorDoc: appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"],
		Selector:    func(ds *appsv1.DaemonSet) string { return metav1.FormatLabelSelector(ds.Spec.Selector) },
	},
})

// templateGeneration is a daemon set's template generation: kube keeps it
// in this annotation in apps/v1, where the spec has no field for it.
func templateGeneration(ds *appsv1.DaemonSet) int64 {
	g, _ := strconv.ParseInt(ds.Annotations[appsv1.DeprecatedTemplateGeneration], 10, 64)
	return g
}

func setTemplateGeneration(ds *appsv1.DaemonSet, g int64) {
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(g, 10)
}

// daemonSetStrategy: deleting a daemon set deletes its pods in the
// background.
type daemonSetStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter: a rolling update of one node at a
// time, 10 revisions.
func (daemonSetStrategy) Default(obj runtime.Object) {
	ds := obj.(*appsv1.DaemonSet)
	s := &ds.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	podspec.SetDefaultsPodSpec(&ds.Spec.Template.Spec)
}

func (s daemonSetStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.Strategy.PrepareForCreate(ctx, obj)
	ds := obj.(*appsv1.DaemonSet)
	setTemplateGeneration(ds, max(templateGeneration(ds), 1))
}

// PrepareForUpdate bumps the generation on spec changes, and the template
// generation on template changes; clients cannot set the latter.
func (s daemonSetStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.Strategy.PrepareForUpdate(ctx, obj, old)
	ds, oldDS := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
	g := templateGeneration(oldDS)
	if !apiequality.Semantic.DeepEqual(oldDS.Spec.Template, ds.Spec.Template) {
		g++
	}
	setTemplateGeneration(ds, g)
}

func (daemonSetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return append(workload.ValidateMeta(obj), validateDaemonSetSpec(obj.(*appsv1.DaemonSet), specPath)...)
}

// ValidateUpdate checks the selector, which never changes, before the
// spec, in kube's order.
func (daemonSetStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ds := obj.(*appsv1.DaemonSet)
	allErrs := append(workload.ValidateMetaUpdate(obj, old), workload.ValidateSelectorUnchanged(ds.Spec.Selector, old.(*appsv1.DaemonSet).Spec.Selector)...)
	return append(allErrs, validateDaemonSetSpec(ds, specPath)...)
}

func validateDaemonSetSpec(ds *appsv1.DaemonSet, fldPath *field.Path) field.ErrorList {
	spec := &ds.Spec
	allErrs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, fldPath.Child("selector"))
	if s, err := metav1.LabelSelectorAsSelector(spec.Selector); err == nil && !s.Matches(labels.Set(spec.Template.Labels)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("template", "metadata", "labels"), spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if spec.Selector != nil && len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, "empty selector is invalid for daemonset"))
	}
	allErrs = append(allErrs, podspec.ValidatePodTemplateSpec(&spec.Template, fldPath.Child("template"))...)
	allErrs = append(allErrs, podspec.ValidateWorkloadPodSpec(&spec.Template.Spec, "DaemonSet", fldPath.Child("template", "spec"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	allErrs = append(allErrs, validateNonnegative(templateGeneration(ds), fldPath.Child("templateGeneration"))...)
	allErrs = append(allErrs, validateDaemonSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"))...)
	return append(allErrs, validateOptionalNonnegative(spec.RevisionHistoryLimit, fldPath.Child("revisionHistoryLimit"))...)
}

// kubeDaemonSetStrategy is the update strategy as kube prints it.
type kubeDaemonSetStrategy struct {
	Type          appsv1.DaemonSetUpdateStrategyType
	RollingUpdate *struct{ MaxUnavailable, MaxSurge intstr.IntOrString }
}

func validateDaemonSetUpdateStrategy(s *appsv1.DaemonSetUpdateStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(fldPath.Child("rollingUpdate"), "")}
		}
		p := fldPath.Child("rollingUpdate")
		maxUnavailable, maxSurge := intOrStringPtr(s.RollingUpdate.MaxUnavailable), intOrStringPtr(s.RollingUpdate.MaxSurge)
		allErrs := corevalidation.ValidatePositiveIntOrPercent(maxUnavailable, p.Child("maxUnavailable"))
		allErrs = append(allErrs, corevalidation.ValidatePositiveIntOrPercent(maxSurge, p.Child("maxSurge"))...)
		allErrs = append(allErrs, corevalidation.ValidateNotMoreThan100Percent(maxUnavailable, p.Child("maxUnavailable"))...)
		allErrs = append(allErrs, corevalidation.ValidateNotMoreThan100Percent(maxSurge, p.Child("maxSurge"))...)
		hasUnavailable, hasSurge := corevalidation.IntOrPercentValue(maxUnavailable) != 0, corevalidation.IntOrPercentValue(maxSurge) != 0
		switch {
		case hasUnavailable && hasSurge:
			allErrs = append(allErrs, field.Invalid(p.Child("maxSurge"), maxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasUnavailable && !hasSurge:
			allErrs = append(allErrs, field.Required(p.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		return allErrs
	}
	shown := kubeDaemonSetStrategy{Type: s.Type}
	if ru := s.RollingUpdate; ru != nil {
		shown.RollingUpdate = &struct{ MaxUnavailable, MaxSurge intstr.IntOrString }{intOrStringPtr(ru.MaxUnavailable), intOrStringPtr(ru.MaxSurge)}
	}
	return field.ErrorList{field.NotSupported(fldPath, shown, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)})}
}

// validateDaemonSetStatusUpdate validates a write of daemonsets/status.
func validateDaemonSetStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	p, s := field.NewPath("status"), obj.(*appsv1.DaemonSet).Status
	allErrs := append(workload.ValidateMetaUpdate(obj, old), validateCounters(p,
		counter{"currentNumberScheduled", int64(s.CurrentNumberScheduled)}, counter{"numberMisscheduled", int64(s.NumberMisscheduled)},
		counter{"desiredNumberScheduled", int64(s.DesiredNumberScheduled)}, counter{"numberReady", int64(s.NumberReady)},
		counter{"observedGeneration", s.ObservedGeneration}, counter{"updatedNumberScheduled", int64(s.UpdatedNumberScheduled)},
		counter{"numberAvailable", int64(s.NumberAvailable)}, counter{"numberUnavailable", int64(s.NumberUnavailable)})...)
	if s.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*s.CollisionCount), p.Child("collisionCount"))...)
	}
	return append(allErrs, validateCollisionCount(p, s.CollisionCount, old.(*appsv1.DaemonSet).Status.CollisionCount)...)
}
