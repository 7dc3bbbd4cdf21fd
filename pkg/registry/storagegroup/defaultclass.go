package storagegroup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ClaimDefaulter is kube's DefaultStorageClass admission plugin: a new
// claim that names no storage class gets the default one, when a class
// is marked so.
type ClaimDefaulter struct {
	// Classes lists storage classes: the storageclasses storage.
	Classes rest.Lister
}

// Admit sets pvc's storage class to the default class when it names none
// (neither field nor beta annotation; an empty name is a choice). name is
// the claim's name as kube's admission sees it.
func (d ClaimDefaulter) Admit(ctx context.Context, pvc *corev1.PersistentVolumeClaim, name string) error {
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	list, err := d.Classes.List(request.WithNamespace(ctx, ""), &metainternalversion.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return apierrors.NewForbidden(corev1.Resource("persistentvolumeclaims"), name, err)
	}
	classes := make([]*storagev1.StorageClass, 0, len(list.Items))
	for _, item := range list.Items {
		sc := &storagev1.StorageClass{}
		if err := item.Decode(sc); err != nil {
			return apierrors.NewForbidden(corev1.Resource("persistentvolumeclaims"), name, err)
		}
		classes = append(classes, sc)
	}
	if def := DefaultClass(classes); def != nil {
		pvc.Spec.StorageClassName = &def.Name
	}
	return nil
}
