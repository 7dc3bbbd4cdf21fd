package customresource

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/miniapiserver/miniapiserver/api/openapi"
)

// The OpenAPI extensions kube gives the definitions of kinds.
const (
	gvkExtension              = "x-kubernetes-group-version-kind"
	selectableFieldsExtension = "x-kubernetes-selectable-fields"
)

var (
	typeMetaDocs    = metav1.TypeMeta{}.SwaggerDoc()
	partialMetaDocs = metav1.PartialObjectMetadata{}.SwaggerDoc()
	partialListDocs = metav1.PartialObjectMetadataList{}.SwaggerDoc()
)

// modelOptions say which document a definition is for.
type modelOptions struct {
	// v2 makes it for /openapi/v2 (refs under #/definitions/, the schema
	// made fit for OpenAPI v2 as kube does), else for /openapi/v3.
	v2 bool
	// selectableFields lists the version's selectable fields (the served
	// documents do; the apply structure does not).
	selectableFields bool
}

func (o modelOptions) ref(name string) string {
	if o.v2 {
		return "#/definitions/" + name
	}
	return "#/components/schemas/" + name
}

// modelName is the definition name of a kind of a custom resource, as
// kube names it: the group reversed ("com.example.stable.v1.CronTab").
func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

// models returns the definitions of v's kind and list kind, by name, as
// kube's OpenAPI builder of custom resources makes them.
func (r *resource) models(v *version, opts modelOptions) map[string]spec.Schema {
	kindName := modelName(r.group, v.name, r.kind)
	kind := r.kindModel(v, opts)
	kind.AddExtension(gvkExtension, []interface{}{map[string]interface{}{"group": r.group, "version": v.name, "kind": r.kind}})
	list := new(spec.Schema).
		Typed("object", "").
		WithDescription(fmt.Sprintf("%s is a list of %s", r.listKind, r.kind)).
		WithRequired("items").
		SetProperty("items", *spec.ArrayProperty(spec.RefSchema(opts.ref(kindName))).
			WithDescription(fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.plural))).
		SetProperty("metadata", *spec.RefSchema(opts.ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")).WithDescription(partialListDocs["metadata"]))
	addTypeMeta(list)
	list.AddExtension(gvkExtension, []map[string]string{{"group": r.group, "version": v.name, "kind": r.listKind}})
	if fields := selectableFields(v); opts.selectableFields && fields != nil {
		kind.AddExtension(selectableFieldsExtension, fields)
		list.AddExtension(selectableFieldsExtension, fields)
	}
	return map[string]spec.Schema{kindName: *kind, modelName(r.group, v.name, r.listKind): *list}
}

// kindModel is the schema of v's kind: its own, with apiVersion, kind
// and metadata as every kind has them. A version without a schema, or
// (in OpenAPI v2) one that keeps unknown fields, is a plain object, so
// that kubectl checks nothing of it.
func (r *resource) kindModel(v *version, opts modelOptions) *spec.Schema {
	if v.structural == nil || opts.v2 && (v.structural.XPreserveUnknownFields || r.preserveUnknownFields) {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	}
	s := v.structural.DeepCopy().Unfold()
	if opts.v2 {
		s = openapiv2.ToStructuralOpenAPIV2(s)
	}
	out := s.ToKubeOpenAPI()
	out.SetProperty("metadata", *spec.RefSchema(opts.ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")).WithDescription(partialMetaDocs["metadata"]))
	addTypeMeta(out)
	addEmbeddedMeta(out, opts)
	return out
}

// addTypeMeta adds apiVersion and kind, as TypeMeta describes them.
func addTypeMeta(s *spec.Schema) {
	s.SetProperty("apiVersion", *spec.StringProperty().WithDescription(typeMetaDocs["apiVersion"]))
	s.SetProperty("kind", *spec.StringProperty().WithDescription(typeMetaDocs["kind"]))
}

// addEmbeddedMeta gives the embedded resources of s (x-kubernetes-
// embedded-resource) the apiVersion, kind and metadata of an object,
// required but the metadata, as kube does (not in OpenAPI v2 under a
// schema that keeps unknown fields, which kubectl would then refuse).
func addEmbeddedMeta(s *spec.Schema, opts modelOptions) {
	for k := range s.Properties {
		p := s.Properties[k]
		addEmbeddedMeta(&p, opts)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		addEmbeddedMeta(s.Items.Schema, opts)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		addEmbeddedMeta(s.AdditionalProperties.Schema, opts)
	}
	if preserve, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && preserve && opts.v2 {
		return
	}
	if embedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !ok || !embedded {
		return
	}
	s.SetProperty("apiVersion", *spec.StringProperty().WithDescription(
		"apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"))
	s.SetProperty("kind", *spec.StringProperty().WithDescription(
		"kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"))
	s.SetProperty("metadata", *spec.RefSchema(opts.ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")).WithDescription(partialMetaDocs["metadata"]))
	for _, f := range []string{"kind", "apiVersion"} {
		if !slices.Contains(s.Required, f) {
			s.Required = append(s.Required, f)
		}
	}
}

// selectableFields is the x-kubernetes-selectable-fields of v (nil
// without any).
func selectableFields(v *version) []interface{} {
	if len(v.def.SelectableFields) == 0 {
		return nil
	}
	out := make([]interface{}, len(v.def.SelectableFields))
	for i, sf := range v.def.SelectableFields {
		out[i] = map[string]interface{}{"fieldPath": strings.TrimPrefix(sf.JSONPath, ".")}
	}
	return out
}

// structure is what server-side apply knows of the kind: the structure
// of every version, built on the first write.
func (r *resource) structure() func() (managedfields.TypeConverter, error) {
	return sync.OnceValues(func() (managedfields.TypeConverter, error) {
		meta, err := openapi.MetaSchemas()
		if err != nil {
			return nil, err
		}
		schemas := make(map[string]*spec.Schema, len(meta)+2*len(r.versions))
		for name, s := range meta {
			schemas[name] = s
		}
		for _, v := range r.versions {
			for name, s := range r.models(v, modelOptions{}) {
				schemas[name] = &s
			}
		}
		return managedfields.NewTypeConverter(schemas, r.preserveUnknownFields)
	})
}

// Description is what the OpenAPI documents say of one served version.
type Description struct {
	Group, Version, Plural, Kind, ListKind string
	Namespaced, Status, Scale              bool
	// KindDefinition and ListDefinition name the definitions of the
	// kind and list kind in V2 and V3.
	KindDefinition, ListDefinition string
	// V2 and V3 are the definitions of the kind and its list, by name,
	// for /openapi/v2 and /openapi/v3.
	V2, V3 map[string]spec.Schema
}

// describe describes the served versions, as kube's OpenAPI controllers
// of custom resources publish them.
func (r *resource) describe() []Description {
	var out []Description
	for _, v := range r.versions {
		if !v.served {
			continue
		}
		out = append(out, Description{
			Group: r.group, Version: v.name, Plural: r.plural, Kind: r.kind, ListKind: r.listKind,
			Namespaced: r.namespaced, Status: v.hasStatus(), Scale: v.hasScale(),
			KindDefinition: modelName(r.group, v.name, r.kind), ListDefinition: modelName(r.group, v.name, r.listKind),
			V2: r.models(v, modelOptions{v2: true, selectableFields: true}),
			V3: r.models(v, modelOptions{selectableFields: true}),
		})
	}
	slices.SortFunc(out, func(a, b Description) int { return strings.Compare(a.Version, b.Version) })
	return out
}
