package customresource

import (
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// version is one version of a definition, with what serving and storing
// it needs of its schema.
type version struct {
	name string
	gvk  schema.GroupVersionKind
	// structural is the version's schema, its defaults pruned as kube
	// serves them (nil without a schema).
	structural *structuralschema.Structural
	// validator checks objects against the schema; statusValidator the
	// status against its part of it (nil without a status subresource).
	validator, statusValidator apiservervalidation.SchemaValidator
	// cel runs the schema's x-kubernetes-validations (nil without any).
	cel *cel.Validator

	subresources *apiextensionsv1.CustomResourceSubresources
	served       bool
	storage      bool
	def          apiextensionsv1.CustomResourceDefinitionVersion
}

// newVersion prepares v of crd, as kube's CRD handler does for each
// version it serves or stores.
func newVersion(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) (*version, error) {
	out := &version{
		name: v.Name, served: v.Served, storage: v.Storage, def: v,
		gvk: schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind},
	}
	var err error
	if out.subresources, err = apiextensionshelpers.GetSubresourcesForVersion(crd, v.Name); err != nil {
		return nil, err
	}
	v1Schema, err := apiextensionshelpers.GetSchemaForVersion(crd, v.Name)
	if err != nil {
		return nil, err
	}
	var props *apiextensions.JSONSchemaProps
	if v1Schema != nil {
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v1Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("converting the schema of %s: %w", v.Name, err)
		}
		props = internal.OpenAPIV3Schema
	}
	if props != nil {
		s, err := structuralschema.NewStructural(props)
		if err != nil && !crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("the schema of %s is not structural: %w", v.Name, err)
		}
		if s != nil {
			// Kube serves the defaults pruned of what the schema does
			// not declare (validation makes sure there is nothing).
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("pruning the defaults of %s: %w", v.Name, err)
			}
			out.structural = s
		}
	}
	if out.validator, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return nil, err
	}
	if out.subresources != nil && out.subresources.Status != nil && props != nil {
		if status, ok := props.Properties["status"]; ok {
			if out.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&status); err != nil {
				return nil, err
			}
		}
	}
	if out.structural != nil && hasValidationRules(out.structural) {
		out.cel = cel.NewValidator(out.structural, true, celconfig.PerCallLimit)
	}
	return out, nil
}

// hasValidationRules reports x-kubernetes-validations anywhere in s.
func hasValidationRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	for _, p := range s.Properties {
		if hasValidationRules(&p) {
			return true
		}
	}
	if s.Items != nil && hasValidationRules(s.Items) {
		return true
	}
	return s.AdditionalProperties != nil && hasValidationRules(s.AdditionalProperties.Structural)
}

func (v *version) hasStatus() bool { return v.subresources != nil && v.subresources.Status != nil }
func (v *version) hasScale() bool  { return v.subresources != nil && v.subresources.Scale != nil }

// coerceOptions say how coerce treats what it finds.
type coerceOptions struct {
	// reportUnknown returns the paths of the fields dropped (a request's
	// body, for fieldValidation).
	reportUnknown bool
	// dropInvalidMetadata drops metadata fields of the wrong type and
	// gives objects without a generation one (objects read from storage,
	// written before kube checked them).
	dropInvalidMetadata bool
}

// coerce gives an object what decoding into a Go type would: its
// metadata as ObjectMeta makes it, and, for an object of the
// definition's kind, only the fields the schema of its own version
// declares (unless the definition preserves unknown fields), as kube's
// decoder of custom resources does. It returns the fields dropped when
// asked to.
func (r *resource) coerce(u map[string]interface{}, opts coerceOptions) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(u, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields: opts.dropInvalidMetadata, ReturnUnknownFieldPaths: opts.reportUnknown,
	})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if v := r.versions[gv.Version]; v != nil && gv.Group == r.group && kind == r.kind {
		if !r.preserveUnknownFields {
			pruneOpts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: opts.reportUnknown}
			unknown = append(unknown, structuralpruning.PruneWithOptions(u, v.structural, true, pruneOpts)...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, v.structural)
		}
		fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u, v.structural, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields: opts.dropInvalidMetadata, ReturnUnknownFieldPaths: opts.reportUnknown,
		})
		if fieldErr != nil {
			return nil, fieldErr
		}
		unknown = append(unknown, paths...)
		if opts.dropInvalidMetadata && objectMeta.Generation == 0 {
			objectMeta.Generation = 1
		}
	}
	if foundKind {
		u["kind"] = kind
	}
	if foundAPIVersion {
		u["apiVersion"] = apiVersion
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// applyDefaults gives an object of the definition's kind the defaults of
// the schema of its own version (an object of another kind gets none).
func (r *resource) applyDefaults(u map[string]interface{}) {
	apiVersion, _, _ := unstructured.NestedString(u, "apiVersion")
	kind, _, _ := unstructured.NestedString(u, "kind")
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != r.group || kind != r.kind {
		return
	}
	if v := r.versions[gv.Version]; v != nil && v.structural != nil {
		structuraldefaulting.Default(u, v.structural)
	}
}
