package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var controllerRevisions = generic.Resource{
	Name: "controllerrevisions", Singular: "controllerrevision", Kind: "ControllerRevision", Namespaced: true,
	New:      generic.NewOf[appsv1.ControllerRevision],
	NewList:  generic.NewOf[appsv1.ControllerRevisionList],
	Strategy: controllerRevisionStrategy{generic.BaseStrategy{Namespaced: true}},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "Controller", Type: "string", Description: "Controller of the object"},
		{Name: "Revision", Type: "string", Description: appsv1.ControllerRevision{}.SwaggerDoc()["revision"]},
		generic.AgeColumn,
	}, func(cr *appsv1.ControllerRevision) ([]interface{}, error) {
		controller := "<none>"
		if ref := metav1.GetControllerOf(cr); ref != nil {
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil {
				return nil, err
			}
			controller = strings.ToLower(gv.WithKind(ref.Kind).GroupKind().String()) + "/" + ref.Name
		}
		return []interface{}{cr.Name, controller, cr.Revision, generic.TranslateTimestampSince(cr.CreationTimestamp)}, nil
	}),
}

// controllerRevisionStrategy: a revision's data never changes; it has no
// generation nor status.
type controllerRevisionStrategy struct{ generic.BaseStrategy }

func (controllerRevisionStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	cr := obj.(*appsv1.ControllerRevision)
	allErrs := validateControllerRevision(cr)
	var v any
	switch err := json.Unmarshal(cr.Data.Raw, &v); {
	case cr.Data.Raw == nil:
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	case err != nil:
		allErrs = append(allErrs, field.Invalid(field.NewPath("data"), "<value omitted>", fmt.Sprintf("error parsing data: %v", err.Error())))
	case v == nil:
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "data is mandatory"))
	default:
		if _, isObject := v.(map[string]any); !isObject {
			allErrs = append(allErrs, field.Required(field.NewPath("data"), "data must be a valid JSON object"))
		}
	}
	return allErrs
}

func (controllerRevisionStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	cr, oldCR := obj.(*appsv1.ControllerRevision), old.(*appsv1.ControllerRevision)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&cr.ObjectMeta, &oldCR.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateControllerRevision(cr)...)
	return append(allErrs, apivalidation.ValidateImmutableField(cr.Data, oldCR.Data, field.NewPath("data"))...)
}

func validateControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&cr.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(allErrs, validateNonnegative(cr.Revision, field.NewPath("revision"))...)
}
