package apiextensions

import (
	"context"
	"slices"
	"strings"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var customResourceDefinitions = generic.Resource{
	Name: "customresourcedefinitions", Singular: "customresourcedefinition", Kind: "CustomResourceDefinition",
	ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
	New: generic.NewOf[apiextensionsv1.CustomResourceDefinition], NewList: generic.NewOf[apiextensionsv1.CustomResourceDefinitionList],
	Strategy:       crdStrategy{generic.BaseStrategy{}},
	StatusStrategy: crdStatusStrategy{generic.BaseStrategy{}},
	Table:          crdTable,
	Normalize:      normalizeStoredCRD,
}

// crdStrategy is kube's: the status is the server's (its controllers'),
// the generation counts spec changes, the storage version is recorded in
// status.storedVersions as soon as a definition names it, and a
// definition is not deleted before its custom resources are
// (PrepareForDelete).
type crdStrategy struct{ generic.BaseStrategy }

var (
	_ rest.Defaulter                = crdStrategy{}
	_ rest.ResetFieldsStrategy      = crdStrategy{}
	_ rest.PrepareForDeleteStrategy = crdStrategy{}
)

// Default implements rest.Defaulter: v1's defaults (singular and list
// kind from the kind, conversion None).
func (crdStrategy) Default(obj runtime.Object) {
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(obj.(*apiextensionsv1.CustomResourceDefinition))
}

func (crdStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy.
func (crdStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(apiextensionsv1.SchemeGroupVersion.String(), "status")
}

func (crdStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	generic.StartGeneration(crd)
	recordStorageVersion(crd)
}

func (crdStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	crd, oldCRD := obj.(*apiextensionsv1.CustomResourceDefinition), old.(*apiextensionsv1.CustomResourceDefinition)
	crd.Status = oldCRD.Status
	generic.BumpGenerationOnSpecChange(crd, oldCRD)
	recordStorageVersion(crd)
}

// recordStorageVersion adds the storage version to status.storedVersions:
// objects may be stored at it from now on.
func recordStorageVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			if !apiextensionshelpers.IsStoredVersion(crd, v.Name) {
				crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			}
			return
		}
	}
}

func (crdStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	crd, err := toInternal(obj.(*apiextensionsv1.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinition(ctx, crd)
}

func (crdStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validateUpdate(ctx, obj, old, validation.ValidateCustomResourceDefinitionUpdate)
}

func (crdStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return schemaWarnings(&obj.(*apiextensionsv1.CustomResourceDefinition).Spec, nil)
}

func (crdStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return schemaWarnings(&obj.(*apiextensionsv1.CustomResourceDefinition).Spec, &old.(*apiextensionsv1.CustomResourceDefinition).Spec)
}

// PrepareForDelete implements rest.PrepareForDeleteStrategy, as kube's
// CRD storage: the first delete marks the definition Terminating and adds
// the finalizer under which the CRD controller deletes its custom
// resources. It sets the deletionTimestamp itself, so that (as in kube)
// the generation stays.
func (crdStrategy) PrepareForDelete(_ context.Context, obj runtime.Object) {
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	now := metav1.NewTime(time.Now())
	crd.DeletionTimestamp = &now
	if !apiextensionshelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	})
}

// crdStatusStrategy serves customresourcedefinitions/status: the spec
// stays. As in kube 1.37, the metadata a status update sends is kept
// (kubernetes/kubernetes#137681).
type crdStatusStrategy struct{ generic.BaseStrategy }

var _ rest.ResetFieldsStrategy = crdStatusStrategy{}

// GetResetFields implements rest.ResetFieldsStrategy.
func (crdStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(apiextensionsv1.SchemeGroupVersion.String(), "spec")
}

func (crdStatusStrategy) AllowUnconditionalUpdate() bool { return false }

func (crdStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*apiextensionsv1.CustomResourceDefinition).Spec = old.(*apiextensionsv1.CustomResourceDefinition).Spec
}

func (crdStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validateUpdate(ctx, obj, old, validation.ValidateUpdateCustomResourceDefinitionStatus)
}

// crdTable is kube 1.37's table of definitions.
var crdTable = generic.TableOf([]metav1.TableColumnDefinition{
	generic.NameColumn,
	{Name: "Scope", Type: "string", Description: "Cluster/Namespaced"},
	{Name: "Versions", Type: "string", Description: "Served versions"},
	generic.CreatedAtColumn,
	{Name: "Group", Type: "string", Priority: 1, Description: "API group"},
	{Name: "Kind", Type: "string", Priority: 1, Description: "CustomResource kind"},
	{Name: "ShortNames", Type: "string", Priority: 1, Description: "Short names"},
	{Name: "Established", Type: "boolean", Priority: 1, Description: "Established status"},
}, func(crd *apiextensionsv1.CustomResourceDefinition) ([]interface{}, error) {
	var versions []string
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		label := v.Name
		if v.Storage {
			label += "(storage)"
		}
		versions = append(versions, label)
	}
	slices.Sort(versions)
	return []interface{}{
		crd.Name, string(crd.Spec.Scope), strings.Join(versions, ","),
		crd.CreationTimestamp.Time.UTC().Format(time.RFC3339),
		crd.Spec.Group, crd.Spec.Names.Kind, strings.Join(crd.Spec.Names.ShortNames, ","),
		apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established),
	}, nil
})
