package apiextensions

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// toInternal converts a definition to the internal type kube's
// validation works on.
func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		return nil, fmt.Errorf("converting the definition to validate it: %w", err)
	}
	return out, nil
}

// schemaWarnings are kube's warnings on a definition's schemas (old is
// nil on create): formats the server does not know, and list-type sets
// of objects or lists, which server-side apply and CEL cannot handle. An
// update warns only of what it introduces.
func schemaWarnings(spec, old *apiextensionsv1.CustomResourceDefinitionSpec) []string {
	formats, sets := schemaFindings(spec)
	if old != nil {
		oldFormats, oldSets := schemaFindings(old)
		formats = slices.DeleteFunc(formats, func(f string) bool { return slices.Contains(oldFormats, f) })
		sets = slices.DeleteFunc(sets, func(s string) bool { return slices.Contains(oldSets, s) })
	}
	var warnings []string
	for _, f := range formats {
		warnings = append(warnings, fmt.Sprintf("unrecognized format %q", f))
	}
	return append(warnings, sets...)
}

// schemaFindings lists the unrecognized formats of spec's schemas (in
// schema order) and the warnings about sets of non-scalar items (sorted,
// each once).
func schemaFindings(in *apiextensionsv1.CustomResourceDefinitionSpec) (formats, sets []string) {
	s := &apiextensions.CustomResourceDefinitionSpec{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec(in, s, nil); err != nil {
		return nil, nil // validation reports what does not convert
	}
	compatibility := environment.DefaultCompatibilityVersion()
	visit := func(schema *apiextensions.JSONSchemaProps) bool {
		if schema.Format != "" {
			formats = append(formats, apiservervalidation.GetUnrecognizedFormats(
				&spec.Schema{SchemaProps: spec.SchemaProps{Format: schema.Format, Type: []string{schema.Type}}}, compatibility)...)
		}
		if schema.XListType != nil && *schema.XListType == "set" && schema.Items != nil && schema.Items.Schema != nil {
			switch t := schema.Items.Schema.Type; t {
			case "object", "array":
				w := fmt.Sprintf("x-kubernetes-list-type: set for items of type %q is not supported by server-side apply or CEL validation rules", t)
				if !slices.Contains(sets, w) {
					sets = append(sets, w)
				}
			}
		}
		return false // visit every schema
	}
	if s.Validation != nil && s.Validation.OpenAPIV3Schema != nil {
		validation.SchemaHas(s.Validation.OpenAPIV3Schema, visit)
	}
	for _, v := range s.Versions {
		if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
			validation.SchemaHas(v.Schema.OpenAPIV3Schema, visit)
		}
	}
	slices.Sort(sets)
	return formats, sets
}

// validateUpdate runs check, one of kube's update validations, on the
// internal forms of obj and old (a failed conversion is an internal
// error).
func validateUpdate(ctx context.Context, obj, old runtime.Object,
	check func(context.Context, *apiextensions.CustomResourceDefinition, *apiextensions.CustomResourceDefinition) field.ErrorList,
) field.ErrorList {
	crd, err := toInternal(obj.(*apiextensionsv1.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldCRD, err := toInternal(old.(*apiextensionsv1.CustomResourceDefinition))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return check(ctx, crd, oldCRD)
}
