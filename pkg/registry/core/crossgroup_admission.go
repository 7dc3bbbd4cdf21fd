package core

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// CrossGroupAdmission is what kube's admission plugins built on other API
// groups' objects do to new pods and claims: a pod's priority from its
// priority class (Priority, scheduling.k8s.io), its runtime class's
// overhead and scheduling (RuntimeClass, node.k8s.io), a claim's default
// storage class (DefaultStorageClass, storage.k8s.io). Those groups'
// storages are built after core's: cmd gives the core group an
// implementation over them. name is the object's name as kube's
// admission sees it (generic.RequestedName); errors are kube's Statuses.
type CrossGroupAdmission interface {
	AdmitPodPriority(ctx context.Context, pod *corev1.Pod, name string) error
	// KeepPodPriority keeps the priority a pod got at its creation when
	// an update of it leaves it out.
	KeepPodPriority(pod, old *corev1.Pod)
	AdmitPodRuntimeClass(ctx context.Context, pod *corev1.Pod, name string) error
	AdmitClaimStorageClass(ctx context.Context, pvc *corev1.PersistentVolumeClaim, name string) error
}

// admitNewPodPlacement runs, on a new pod, kube's mutating admission
// plugins that decide where and how it runs, in kube's order: Priority,
// DefaultTolerationSeconds, RuntimeClass (which merges its class's
// tolerations after the default ones). adm nil: the default tolerations
// only.
func admitNewPodPlacement(ctx context.Context, pod *corev1.Pod, adm CrossGroupAdmission) error {
	name := generic.RequestedName(pod)
	if adm != nil {
		if err := adm.AdmitPodPriority(ctx, pod, name); err != nil {
			return err
		}
	}
	addDefaultTolerations(&pod.Spec)
	if adm != nil {
		return adm.AdmitPodRuntimeClass(ctx, pod, name)
	}
	return nil
}

// podPlacementOnUpdate is the Priority plugin on updates of pods: the
// pods' BeginUpdate hook.
func podPlacementOnUpdate(adm CrossGroupAdmission) generic.BeginUpdateFunc {
	return func(_ context.Context, obj, old runtime.Object, _ *metav1.UpdateOptions) (generic.FinishFunc, error) {
		if adm != nil {
			adm.KeepPodPriority(obj.(*corev1.Pod), old.(*corev1.Pod))
		}
		return finishNothing, nil
	}
}

// claimDefaultClass is the DefaultStorageClass plugin: the claims'
// BeginCreate hook.
func claimDefaultClass(adm CrossGroupAdmission) generic.BeginCreateFunc {
	return func(ctx context.Context, obj runtime.Object, _ *metav1.CreateOptions) (generic.FinishFunc, error) {
		if adm != nil {
			pvc := obj.(*corev1.PersistentVolumeClaim)
			if err := adm.AdmitClaimStorageClass(ctx, pvc, generic.RequestedName(pvc)); err != nil {
				return nil, err
			}
		}
		return finishNothing, nil
	}
}

func finishNothing(context.Context, bool) {}
