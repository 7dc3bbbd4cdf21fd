package admission

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/storagegroup"
)

// The finalizers of kube's StorageObjectInUseProtection; kube's
// pv-protection and pvc-protection controllers remove them once nothing
// uses the volume or claim.
const (
	PVProtectionFinalizer  = "kubernetes.io/pv-protection"
	PVCProtectionFinalizer = "kubernetes.io/pvc-protection"
)

// StorageObjectInUseProtection is kube's mutating plugin of that name:
// a new PersistentVolume, PersistentVolumeClaim or VolumeAttributesClass
// gets its protection finalizer, so that it outlives its deletion while
// something uses it.
type StorageObjectInUseProtection struct{}

// Validate implements handlers.Admission: the plugin only mutates.
func (StorageObjectInUseProtection) Validate(context.Context, handlers.Attributes, runtime.Object) error {
	return nil
}

// Admit implements handlers.MutatingAdmission.
func (StorageObjectInUseProtection) Admit(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	finalizer, ok := protectionFinalizers[a.Resource.GroupResource()]
	if a.Operation != handlers.Create || a.Subresource != "" || !ok {
		return nil
	}
	// By resource, not Go type: a class may come at any served version.
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	if f := m.GetFinalizers(); !slices.Contains(f, finalizer) {
		m.SetFinalizers(append(f, finalizer))
	}
	return nil
}

var protectionFinalizers = map[schema.GroupResource]string{
	corev1.Resource("persistentvolumes"):          PVProtectionFinalizer,
	corev1.Resource("persistentvolumeclaims"):     PVCProtectionFinalizer,
	storagev1.Resource("volumeattributesclasses"): storagegroup.VACProtectionFinalizer,
}

// TaintNodesByCondition is kube's mutating plugin of that name: a new
// Node is tainted node.kubernetes.io/not-ready:NoSchedule, so that
// nothing is scheduled on it before the node lifecycle controller sees
// it Ready (and removes the taint).
type TaintNodesByCondition struct{}

// Validate implements handlers.Admission: the plugin only mutates.
func (TaintNodesByCondition) Validate(context.Context, handlers.Attributes, runtime.Object) error {
	return nil
}

// Admit implements handlers.MutatingAdmission.
func (TaintNodesByCondition) Admit(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	node, ok := obj.(*corev1.Node)
	if a.Operation != handlers.Create || a.Subresource != "" || !ok {
		return nil
	}
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for _, t := range node.Spec.Taints {
		if t.MatchTaint(&notReady) {
			return nil
		}
	}
	node.Spec.Taints = append(node.Spec.Taints, notReady)
	return nil
}
