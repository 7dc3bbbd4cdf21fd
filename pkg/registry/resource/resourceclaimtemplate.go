package resource

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

func newResourceClaimTemplates(admin adminAccess) generic.Resource {
	return generic.Resource{
		Name: "resourceclaimtemplates", Singular: "resourceclaimtemplate", Kind: "ResourceClaimTemplate", Namespaced: true,
		New: generic.NewOf[resourcev1.ResourceClaimTemplate], NewList: generic.NewOf[resourcev1.ResourceClaimTemplateList],
		Strategy:            claimTemplateStrategy{BaseStrategy: generic.BaseStrategy{Namespaced: true}, admin: admin},
		ReturnDeletedObject: true,
		Table: generic.TablePrinter{
			Columns: []metav1.TableColumnDefinition{generic.NameColumn, generic.AgeColumn},
			Cells: func(obj runtime.Object) ([]interface{}, error) {
				t := obj.(*resourcev1.ResourceClaimTemplate)
				return []interface{}{t.Name, generic.TranslateTimestampSince(t.CreationTimestamp)}, nil
			},
		},
	}
}

// claimTemplateStrategy: the claims made from a template (one per pod)
// are as it says; its spec never changes.
type claimTemplateStrategy struct {
	generic.BaseStrategy
	admin adminAccess
}

func (claimTemplateStrategy) Default(obj runtime.Object) {
	defaultDeviceClaim(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec.Devices)
}

func (claimTemplateStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, nil)
}

func (claimTemplateStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	dropDisabledClaimFields(&obj.(*resourcev1.ResourceClaimTemplate).Spec.Spec, &old.(*resourcev1.ResourceClaimTemplate).Spec.Spec)
}

func (s claimTemplateStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	t := obj.(*resourcev1.ResourceClaimTemplate)
	allErrs := s.admin.checkRequests(ctx, t.Namespace, t.Spec.Spec.Devices.Requests)
	return declarativeLast(append(allErrs, validateClaimTemplate(t)...))
}

func validateClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&t.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	allErrs = append(allErrs, validateTemplateMeta(&t.Spec.ObjectMeta, spec.Child("metadata"))...)
	return append(allErrs, validateClaimSpec(&t.Spec.Spec, spec.Child("spec"))...)
}

// validateTemplateMeta: the metadata of the claims made from a template
// may have labels and annotations, nothing else.
func validateTemplateMeta(m *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateAnnotations(m.Annotations, fldPath.Child("annotations"))
	allErrs = append(allErrs, metav1validation.ValidateLabels(m.Labels, fldPath.Child("labels"))...)
	// Every other field, by reflection, so that a field ObjectMeta gains
	// is refused too.
	v := reflect.ValueOf(*m)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Name == "Labels" || f.Name == "Annotations" || v.Field(i).IsZero() {
			continue
		}
		allErrs = append(allErrs, field.Forbidden(fldPath.Child(strings.ToLower(f.Name[:1])+f.Name[1:]), "cannot be set"))
	}
	return allErrs
}

// ValidateUpdate is kube's: the template is checked as new, then its spec
// must not have changed.
func (claimTemplateStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	t, oldT := obj.(*resourcev1.ResourceClaimTemplate), old.(*resourcev1.ResourceClaimTemplate)
	allErrs := validateClaimTemplate(t)
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(&t.ObjectMeta, &oldT.ObjectMeta, field.NewPath("metadata"))...)
	if !apiequality.Semantic.DeepEqual(t.Spec, oldT.Spec) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec"), internalTemplateSpec(t.Spec), "field is immutable"))
	}
	return declarativeLast(allErrs)
}

// internalTemplateSpec shows a template's spec as kube's immutability
// error does: its internal type, whose embedded ObjectMeta (JSON-tagged)
// is inlined and whose claim spec has no JSON tags.
type internalTemplateSpec resourcev1.ResourceClaimTemplateSpec

func (s internalTemplateSpec) MarshalJSON() ([]byte, error) {
	meta, err := json.Marshal(s.ObjectMeta)
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(corevalidation.InternalValue(s.Spec))
	if err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(meta, []byte("}"))
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, `"Spec":`...)
	out = append(out, spec...)
	return append(out, '}'), nil
}
