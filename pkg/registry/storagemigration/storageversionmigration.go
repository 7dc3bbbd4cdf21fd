package storagemigration

import (
	"context"
	"fmt"
	"strings"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var storageVersionMigrations = generic.Resource{
	Name: "storageversionmigrations", Singular: "storageversionmigration", Kind: "StorageVersionMigration",
	New: generic.NewOf[storagemigrationv1.StorageVersionMigration], NewList: generic.NewOf[storagemigrationv1.StorageVersionMigrationList],
	Strategy: svmStrategy{},
	// Only status changes on /status, and a migration's outcome is final.
	StatusStrategy: generic.StatusStrategy{Main: svmStrategy{}, GroupVersion: "storagemigration.k8s.io/v1", KeepMetadata: true,
		Validate: validateSVMStatusUpdate},
	// kube's NAME column has no "name" format here.
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Description: generic.NameColumn.Description},
		{Name: "Resource", Type: "string", Description: "GroupResource to migrate"},
		{Name: "Status", Type: "string", Description: "Status of the migration"},
	}, func(svm *storagemigrationv1.StorageVersionMigration) ([]interface{}, error) {
		return []interface{}{svm.Name, svm.Spec.Resource.String(), migrationState(svm)}, nil
	}),
}

// migrationState is the last of Running, Failed, Succeeded that is true,
// or Unknown.
func migrationState(svm *storagemigrationv1.StorageVersionMigration) string {
	state := "Unknown"
	for _, c := range svm.Status.Conditions {
		switch storagemigrationv1.MigrationConditionType(c.Type) {
		case storagemigrationv1.MigrationRunning, storagemigrationv1.MigrationFailed, storagemigrationv1.MigrationSucceeded:
			if c.Status == metav1.ConditionTrue {
				state = c.Type
			}
		}
	}
	return state
}

// svmStrategy is kube's: the spec is fixed at creation, status belongs to
// the migrator (/status), and every update names the resourceVersion it
// read.
type svmStrategy struct{ generic.SpecStrategy }

func (svmStrategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields implements rest.ResetFieldsStrategy.
func (svmStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields("storagemigration.k8s.io/v1", "status")
}

func (svmStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateSVM(obj.(*storagemigrationv1.StorageVersionMigration))
}

func (svmStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svm, oldSVM := obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration)
	allErrs := validateSVM(svm)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&svm.ObjectMeta, &oldSVM.ObjectMeta, field.NewPath("metadata"))...)
	if svm.Spec != oldSVM.Spec {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), corevalidation.InternalValue(svm.Spec), apivalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

func validateSVM(svm *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&svm.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	gr, p := svm.Spec.Resource, field.NewPath("spec", "resource")
	// The rules of an APIService's group and resource.
	if gr.Resource == "" {
		allErrs = append(allErrs, field.Required(p.Child("resource"), "resource is required to be set"))
	} else if errs := validation.IsDNS1035Label(gr.Resource); len(errs) > 0 {
		allErrs = append(allErrs, field.Invalid(p.Child("resource"), gr.Resource, strings.Join(errs, ",")))
	}
	if gr.Group != "" {
		if errs := validation.IsDNS1123Subdomain(gr.Group); len(errs) > 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("group"), gr.Group, strings.Join(errs, ",")))
		}
	}
	return allErrs
}

// validateSVMStatusUpdate checks a status write: valid conditions, a
// resource version that stays once set, and one outcome.
func validateSVMStatusUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svm, oldSVM := obj.(*storagemigrationv1.StorageVersionMigration), old.(*storagemigrationv1.StorageVersionMigration)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&svm.ObjectMeta, &oldSVM.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	if rv := svm.Status.ResourceVersion; rv != "" {
		if cmp, err := resourceversion.CompareResourceVersion(rv, rv); err != nil || cmp != 0 {
			if err == nil {
				err = fmt.Errorf("unable to compare resource versions, %s is not equal to %s", rv, rv)
			}
			allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), rv, err.Error()))
		}
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(svm.Status.Conditions, p.Child("conditions"))...)
	if oldRV := oldSVM.Status.ResourceVersion; oldRV != "" && oldRV != svm.Status.ResourceVersion {
		allErrs = append(allErrs, field.Invalid(p.Child("resourceVersion"), svm.Status.ResourceVersion, apivalidation.FieldImmutableErrorMsg))
	}
	conds := svm.Status.Conditions
	succeeded, failed := conditionTrue(conds, storagemigrationv1.MigrationSucceeded), conditionTrue(conds, storagemigrationv1.MigrationFailed)
	if succeeded && failed {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), conds, "Both success and failed conditions cannot be true at the same time"))
	}
	if conditionTrue(oldSVM.Status.Conditions, storagemigrationv1.MigrationSucceeded) && !succeeded {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), conds, "Success condition cannot be set to false once it is true"))
	}
	if conditionTrue(oldSVM.Status.Conditions, storagemigrationv1.MigrationFailed) && !failed {
		allErrs = append(allErrs, field.Invalid(p.Child("conditions"), conds, "Failed condition cannot be set to false once it is true"))
	}
	return allErrs
}

func conditionTrue(conds []metav1.Condition, t storagemigrationv1.MigrationConditionType) bool {
	return apimeta.IsStatusConditionTrue(conds, string(t))
}
