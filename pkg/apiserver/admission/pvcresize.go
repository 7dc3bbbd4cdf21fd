package admission

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PersistentVolumeClaimResize lets a claim ask for more storage only when
// it is bound and its storage class allows volume expansion, as kube's
// plugin of that name does.
type PersistentVolumeClaimResize struct {
	// StorageClasses reads storage classes.
	StorageClasses rest.Getter
}

var (
	errResizeUnbound = errors.New("Only bound persistent volume claims can be expanded") //nolint:staticcheck // kube's words
	errResizeClass   = errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize")
)

// Validate implements handlers.Admission.
func (p *PersistentVolumeClaimResize) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != corev1.Resource("persistentvolumeclaims") || a.Subresource != "" || a.Operation != handlers.Update {
		return nil
	}
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	old, oldOK := a.Old.(*corev1.PersistentVolumeClaim)
	if !ok || !oldOK {
		return nil
	}
	size, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(oldSize) <= 0 {
		return nil
	}
	gr := a.Resource.GroupResource()
	if old.Status.Phase != corev1.ClaimBound {
		return apierrors.NewForbidden(gr, a.Name, errResizeUnbound)
	}
	if !p.allowsExpansion(ctx, claimClass(pvc), claimClass(old)) {
		return apierrors.NewForbidden(gr, a.Name, errResizeClass)
	}
	return nil
}

// allowsExpansion reports whether the claim's class (the same before and
// after) exists and allows volume expansion.
func (p *PersistentVolumeClaimResize) allowsExpansion(ctx context.Context, class, oldClass string) bool {
	if class == "" || class != oldClass {
		return false
	}
	obj, err := p.StorageClasses.Get(request.WithNamespace(ctx, ""), class, &metav1.GetOptions{})
	if err != nil {
		return false
	}
	sc, ok := obj.(*storagev1.StorageClass)
	return ok && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}

// claimClass is the storage class a claim names: the beta annotation
// first, as kube reads it.
func claimClass(pvc *corev1.PersistentVolumeClaim) string {
	if class, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}
