package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// podEphemeralContainersStrategy serves pods/ephemeralcontainers (what
// kubectl debug writes): of the pod sent, only spec.ephemeralContainers
// counts; existing ones stay as they are.
type podEphemeralContainersStrategy struct{ podStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: nothing, as kube's
// endpoint declares (its strategy's filter is not wired to it): an apply
// here records every field it names, even those the strategy drops.
func (podEphemeralContainersStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return nil
}

func (podEphemeralContainersStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	ephemeral := pod.Spec.EphemeralContainers
	pod.Spec, pod.Status = *oldPod.Spec.DeepCopy(), *oldPod.Status.DeepCopy()
	pod.Spec.EphemeralContainers = ephemeral
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &oldPod.ObjectMeta)
	generic.BumpGenerationOnSpecChange(pod, oldPod)
}

func (podEphemeralContainersStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return podspec.ValidatePodEphemeralContainersUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}

func (podEphemeralContainersStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// podResizeStrategy serves pods/resize (in-place vertical scaling): of the
// pod sent, only the containers' resources and resize policies and the
// pod-level resources count.
type podResizeStrategy struct{ podStrategy }

// GetResetFields implements rest.ResetFieldsStrategy: nothing, as kube's
// endpoint declares (see podEphemeralContainersStrategy's).
func (podResizeStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return nil }

func (podResizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
	keepResizeOnly(pod, oldPod)
	if pod.Spec.Resources == nil && oldPod.Spec.Resources != nil {
		// A client unaware of pod-level resources dropped them.
		pod.Spec.Resources = oldPod.Spec.Resources.DeepCopy()
	}
	generic.BumpGenerationOnSpecChange(pod, oldPod)
}

// keepResizeOnly makes pod the old pod with the new resources (pod-level,
// and the containers' with their resize policies). Containers added,
// removed, renamed or reordered leave pod as sent, for validation to
// refuse.
func keepResizeOnly(pod, old *corev1.Pod) {
	if len(pod.Spec.Containers) != len(old.Spec.Containers) || len(pod.Spec.InitContainers) != len(old.Spec.InitContainers) {
		return
	}
	containers, ok := withNewResources(pod.Spec.Containers, old.Spec.Containers)
	if !ok {
		return
	}
	initContainers, ok := withNewResources(pod.Spec.InitContainers, old.Spec.InitContainers)
	if !ok {
		return
	}
	podResources := pod.Spec.Resources
	pod.Spec, pod.Status = *old.Spec.DeepCopy(), *old.Status.DeepCopy()
	pod.Spec.Resources = podResources
	pod.Spec.Containers, pod.Spec.InitContainers = containers, initContainers
	metav1.ResetObjectMetaForStatus(&pod.ObjectMeta, &old.ObjectMeta)
}

// withNewResources is old with the resources and resize policies of
// containers, paired by index; ok is false when a name differs.
func withNewResources(containers, old []corev1.Container) (out []corev1.Container, ok bool) {
	if len(containers) == 0 {
		return containers, true
	}
	out = make([]corev1.Container, len(old))
	for i := range old {
		if containers[i].Name != old[i].Name {
			return nil, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources, out[i].ResizePolicy = containers[i].Resources, containers[i].ResizePolicy
	}
	return out, true
}

func (podResizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return podspec.ValidatePodResize(obj.(*corev1.Pod), old.(*corev1.Pod))
}

func (podResizeStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
