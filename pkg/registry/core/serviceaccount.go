package core

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var serviceAccounts = generic.Resource{
	Name: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount", Namespaced: true,
	ShortNames: []string{"sa"},
	New:        generic.NewOf[corev1.ServiceAccount],
	NewList:    generic.NewOf[corev1.ServiceAccountList],
	Strategy:   serviceAccountStrategy{generic.BaseStrategy{Namespaced: true}},
	Table:      generic.NameAgeTable,
	// kube returns the deleted service account, not a Status.
	ReturnDeletedObject: true,
}

// enforceMountableSecretsAnnotation is deprecated; kube warns about it.
const enforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"

type serviceAccountStrategy struct{ generic.BaseStrategy }

func (serviceAccountStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

func (serviceAccountStrategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	cleanSecretReferences(obj.(*corev1.ServiceAccount))
}

// cleanSecretReferences keeps only the names of the referenced secrets.
func cleanSecretReferences(sa *corev1.ServiceAccount) {
	for i, s := range sa.Secrets {
		sa.Secrets[i] = corev1.ObjectReference{Name: s.Name}
	}
}

func (serviceAccountStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	sa := obj.(*corev1.ServiceAccount)
	return corevalidation.ValidateObjectMeta(&sa.ObjectMeta, true, apivalidation.ValidateServiceAccountName, field.NewPath("metadata"))
}

func (serviceAccountStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	sa, oldSA := obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&sa.ObjectMeta, &oldSA.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, corevalidation.ValidateObjectMeta(&sa.ObjectMeta, true, apivalidation.ValidateServiceAccountName, field.NewPath("metadata"))...)
}

func (serviceAccountStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return serviceAccountWarnings(obj.(*corev1.ServiceAccount), nil)
}

func (serviceAccountStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return serviceAccountWarnings(obj.(*corev1.ServiceAccount), old.(*corev1.ServiceAccount))
}

// serviceAccountWarnings warns when the deprecated annotation appears.
func serviceAccountWarnings(sa, old *corev1.ServiceAccount) []string {
	if old != nil {
		if _, ok := old.Annotations[enforceMountableSecretsAnnotation]; ok {
			return nil
		}
	}
	if _, ok := sa.Annotations[enforceMountableSecretsAnnotation]; ok {
		return []string{fmt.Sprintf("metadata.annotations[%s]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets",
			enforceMountableSecretsAnnotation)}
	}
	return nil
}
