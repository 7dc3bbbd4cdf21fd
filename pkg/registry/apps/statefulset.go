package apps

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
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

var statefulSets = workload.Declare(workload.Kind[*appsv1.StatefulSet, *appsv1.StatefulSetList]{
	ShortName: "sts",
	Strategy:  statefulSetStrategy{workload.NewStrategy("apps/v1", rest.DeleteDependents)},
	Status:    generic.StatusStrategy{Validate: validateStatefulSetStatusUpdate},
	Scale:     generic.WorkloadScale[*appsv1.StatefulSet]("apps/v1beta1", "apps/v1beta2", "apps/v1"),
	// kube prints no selector for stateful sets.
	Table: workload.Table[*appsv1.StatefulSet]{
		Columns: []metav1.TableColumnDefinition{{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"}},
		Cells: func(s *appsv1.StatefulSet) []interface{} {
			return []interface{}{fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, ptr.Deref(s.Spec.Replicas, 0))}
		},
		Template: func(s *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &s.Spec.Template },
	},
})

// statefulSetStrategy: deleting a stateful set deletes its pods in
// the background.
type statefulSetStrategy struct{ workload.Strategy }

// Default implements rest.Defaulter: ordered pod management, rolling
// updates one pod at a time, claims retained, 1 replica, 10 revisions.
func (statefulSetStrategy) Default(obj runtime.Object) {
	s := obj.(*appsv1.StatefulSet)
	spec := &s.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = ptr.To[int32](0)
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr.To[int32](1)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	podspec.SetDefaultsPodSpec(&spec.Template.Spec)
	for i := range spec.VolumeClaimTemplates {
		c := &spec.VolumeClaimTemplates[i]
		// kube serves the claim templates with their kind.
		c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
		if c.Status.Phase == "" {
			c.Status.Phase = corev1.ClaimPending
		}
		podspec.SetDefaultsPersistentVolumeClaimSpec(&c.Spec)
	}
}

func (statefulSetStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	s := obj.(*appsv1.StatefulSet)
	allErrs := corevalidation.ValidateObjectMeta(&s.ObjectMeta, true, apivalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(allErrs, validateStatefulSetSpec(&s.Spec, field.NewPath("spec"), statefulSetOptions{})...)
}

// ValidateUpdate: a statefulset's selector, claim templates, service name
// and pod management policy never change. Templates that were valid once
// are not validated again when the old spec no longer is.
func (statefulSetStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	allErrs := workload.ValidateMetaUpdate(obj, old)
	opts := statefulSetOptions{allowInvalidServiceName: true, skipClaimTemplates: true}
	if len(validateStatefulSetSpec(&oldS.Spec, field.NewPath("spec"), opts)) > 0 {
		opts.skipTemplate = true
	}
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateStatefulSetSpec(&s.Spec, specPath, opts)...)
	allErrs = append(allErrs, workload.ValidateSelectorUnchanged(s.Spec.Selector, oldS.Spec.Selector)...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(s.Spec.VolumeClaimTemplates, oldS.Spec.VolumeClaimTemplates, specPath.Child("volumeClaimTemplates"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(s.Spec.ServiceName, oldS.Spec.ServiceName, specPath.Child("serviceName"))...)
	return append(allErrs, apivalidation.ValidateImmutableField(s.Spec.PodManagementPolicy, oldS.Spec.PodManagementPolicy, specPath.Child("podManagementPolicy"))...)
}

type statefulSetOptions struct {
	allowInvalidServiceName bool
	skipTemplate            bool
	skipClaimTemplates      bool
}

// kubeStatefulSetStrategy is the update strategy as kube prints it.
type kubeStatefulSetStrategy struct {
	Type          appsv1.StatefulSetUpdateStrategyType
	RollingUpdate *struct {
		Partition      int32
		MaxUnavailable *intstr.IntOrString
	}
}

func validateStatefulSetSpec(spec *appsv1.StatefulSetSpec, fldPath *field.Path, opts statefulSetOptions) field.ErrorList {
	var allErrs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		allErrs = append(allErrs, field.Required(fldPath.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		allErrs = append(allErrs, field.Invalid(fldPath.Child("podManagementPolicy"), spec.PodManagementPolicy, "must be 'OrderedReady' or 'Parallel'"))
	}
	allErrs = append(allErrs, validateStatefulSetUpdateStrategy(&spec.UpdateStrategy, fldPath.Child("updateStrategy"))...)
	if p := spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		supported := []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}
		pp := fldPath.Child("persistentVolumeClaimRetentionPolicy")
		for _, v := range []struct {
			value appsv1.PersistentVolumeClaimRetentionPolicyType
			name  string
		}{{p.WhenDeleted, "whenDeleted"}, {p.WhenScaled, "whenScaled"}} {
			if v.value != appsv1.RetainPersistentVolumeClaimRetentionPolicyType && v.value != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				allErrs = append(allErrs, field.NotSupported(pp.Child(v.name), v.value, supported))
			}
		}
	}
	if !opts.skipClaimTemplates {
		for i := range spec.VolumeClaimTemplates {
			allErrs = append(allErrs, validateClaimSpec(&spec.VolumeClaimTemplates[i].Spec, fldPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	allErrs = append(allErrs, validateNonnegative(int64(ptr.Deref(spec.Replicas, 0)), fldPath.Child("replicas"))...)
	allErrs = append(allErrs, validateNonnegative(int64(spec.MinReadySeconds), fldPath.Child("minReadySeconds"))...)
	if spec.Ordinals != nil {
		allErrs = append(allErrs, validateNonnegative(int64(spec.Ordinals.Start), fldPath.Child("ordinals.start"))...)
	}
	if !opts.allowInvalidServiceName && spec.ServiceName != "" {
		for _, msg := range apivalidation.NameIsDNSLabel(spec.ServiceName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceName"), spec.ServiceName, msg))
		}
	}
	allErrs = append(allErrs, validateSelector(spec.Selector, "statefulset", fldPath.Child("selector"))...)
	if selector, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("selector"), spec.Selector, ""))
	} else {
		allErrs = append(allErrs, validateStatefulSetTemplate(spec, matcher(selector), fldPath.Child("template"), opts)...)
	}
	return append(allErrs, podspec.ValidateWorkloadPodSpec(&spec.Template.Spec, "StatefulSet", fldPath.Child("template", "spec"))...)
}

func validateStatefulSetUpdateStrategy(s *appsv1.StatefulSetUpdateStrategy, fldPath *field.Path) field.ErrorList {
	switch s.Type {
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Invalid(fldPath.Child("rollingUpdate"), kubeStatefulSetRollingUpdate(s.RollingUpdate), "only allowed for updateStrategy 'RollingUpdate'")}
		}
		return nil
	case appsv1.RollingUpdateStatefulSetStrategyType:
		ru := s.RollingUpdate
		if ru == nil {
			return nil
		}
		p := fldPath.Child("rollingUpdate")
		allErrs := validateNonnegative(int64(ptr.Deref(ru.Partition, 0)), p.Child("partition"))
		if mu := ru.MaxUnavailable; mu != nil {
			allErrs = append(allErrs, corevalidation.ValidatePositiveIntOrPercent(*mu, p.Child("maxUnavailable"))...)
			if corevalidation.IntOrPercentValue(*mu) == 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("maxUnavailable"), *mu, "cannot be 0"))
			}
			allErrs = append(allErrs, corevalidation.ValidateNotMoreThan100Percent(*mu, p.Child("maxUnavailable"))...)
		}
		return allErrs
	}
	shown := kubeStatefulSetStrategy{Type: s.Type}
	if s.RollingUpdate != nil {
		shown.RollingUpdate = kubeStatefulSetRollingUpdate(s.RollingUpdate)
	}
	return field.ErrorList{field.Invalid(fldPath, shown, "must be 'RollingUpdate' or 'OnDelete'")}
}

func kubeStatefulSetRollingUpdate(ru *appsv1.RollingUpdateStatefulSetStrategy) *struct {
	Partition      int32
	MaxUnavailable *intstr.IntOrString
} {
	return &struct {
		Partition      int32
		MaxUnavailable *intstr.IntOrString
	}{ptr.Deref(ru.Partition, 0), ru.MaxUnavailable}
}

// validateStatefulSetTemplate validates the pod template as the
// controller will use it: hostname and subdomain are the controller's to
// set, and the claim templates become volumes.
func validateStatefulSetTemplate(spec *appsv1.StatefulSetSpec, selector func(map[string]string) (bool, bool), fldPath *field.Path, opts statefulSetOptions) field.ErrorList {
	template := &spec.Template
	if template.Spec.Subdomain != "" || template.Spec.Hostname != "" || len(spec.VolumeClaimTemplates) > 0 {
		template = template.DeepCopy()
		template.Spec.Subdomain, template.Spec.Hostname = "", ""
		if len(spec.VolumeClaimTemplates) > 0 {
			claims := map[string]bool{}
			var volumes []corev1.Volume
			for _, c := range spec.VolumeClaimTemplates {
				if !claims[c.Name] {
					claims[c.Name] = true
					volumes = append(volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name},
					}})
				}
			}
			for _, v := range template.Spec.Volumes {
				if !claims[v.Name] {
					volumes = append(volumes, v)
				}
			}
			template.Spec.Volumes = volumes
		}
	}
	var allErrs field.ErrorList
	if matches, empty := selector(template.Labels); !empty && !matches {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("metadata", "labels"), template.Labels, "`selector` does not match template `labels`"))
	}
	if !opts.skipTemplate {
		allErrs = append(allErrs, podspec.ValidatePodTemplateSpec(template, fldPath)...)
	}
	// kube validates these a second time here.
	allErrs = append(allErrs, metav1validation.ValidateLabels(template.Labels, fldPath.Child("labels"))...)
	return append(allErrs, apivalidation.ValidateAnnotations(template.Annotations, fldPath.Child("annotations"))...)
}

// validateClaimSpec checks what a claim template needs: an access mode
// and a storage request.
func validateClaimSpec(spec *corev1.PersistentVolumeClaimSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.AccessModes) == 0 {
		allErrs = append(allErrs, field.Required(fldPath.Child("accessModes"), "at least 1 access mode is required"))
	}
	supported := []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	for _, m := range spec.AccessModes {
		ok := false
		for _, s := range supported {
			ok = ok || m == s
		}
		if !ok {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("accessModes"), m, supported))
		}
	}
	storagePath := fldPath.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		allErrs = append(allErrs, field.Required(storagePath, ""))
	} else if q.Sign() <= 0 {
		allErrs = append(allErrs, field.Invalid(storagePath, q.String(), "must be greater than zero"))
	}
	if m := spec.VolumeMode; m != nil && *m != corev1.PersistentVolumeBlock && *m != corev1.PersistentVolumeFilesystem {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("volumeMode"), *m, []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}))
	}
	return allErrs
}

// validateStatefulSetStatusUpdate validates a write of statefulsets/status.
func validateStatefulSetStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
	p, st := field.NewPath("status"), s.Status
	allErrs := validateCounters(p,
		counter{"replicas", int64(st.Replicas)}, counter{"readyReplicas", int64(st.ReadyReplicas)},
		counter{"currentReplicas", int64(st.CurrentReplicas)}, counter{"updatedReplicas", int64(st.UpdatedReplicas)},
		counter{"availableReplicas", int64(st.AvailableReplicas)}, counter{"observedGeneration", st.ObservedGeneration})
	if st.CollisionCount != nil {
		allErrs = append(allErrs, validateNonnegative(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	const replicas = "status.replicas"
	allErrs = append(allErrs, validateNotAbove(p, "readyReplicas", st.ReadyReplicas, st.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "currentReplicas", st.CurrentReplicas, st.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "updatedReplicas", st.UpdatedReplicas, st.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "availableReplicas", st.AvailableReplicas, st.Replicas, replicas)...)
	allErrs = append(allErrs, validateNotAbove(p, "availableReplicas", st.AvailableReplicas, st.ReadyReplicas, "status.readyReplicas")...)
	allErrs = append(allErrs, workload.ValidateMetaUpdate(obj, old)...)
	return append(allErrs, validateCollisionCount(p, st.CollisionCount, oldS.Status.CollisionCount)...)
}
