package fieldmanager

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/miniapiserver/miniapiserver/api/openapi/structure"
)

// builtinConverter is the managedfields.TypeConverter of the built-in
// kinds, over the structure hack/openapi-gen derived from the OpenAPI
// definitions (api/openapi/structure): the same types as
// managedfields.NewTypeConverter would derive from definitions.json at
// run time, without decoding anything.
type builtinConverter struct {
	parser *typed.Parser
	kinds  map[schema.GroupVersionKind]*typed.ParseableType
	// unknown is a converter of no kinds, which answers for the kinds
	// this one lacks: apimachinery's merge tells a version it cannot
	// convert to (a managed fields entry of a version no longer served,
	// which it drops) from a failure by the type of that error, which is
	// unexported, so it has to be apimachinery's own.
	unknown managedfields.TypeConverter
}

var _ managedfields.TypeConverter = (*builtinConverter)(nil)

// newBuiltinConverter returns the converter of kinds, whose types are
// among types.
func newBuiltinConverter(types []smdschema.TypeDef, kinds []structure.Kind) (*builtinConverter, error) {
	unknown, err := managedfields.NewTypeConverter(map[string]*spec.Schema{}, false)
	if err != nil {
		return nil, err
	}
	c := &builtinConverter{
		parser:  &typed.Parser{Schema: smdschema.Schema{Types: types}},
		kinds:   make(map[schema.GroupVersionKind]*typed.ParseableType, len(kinds)),
		unknown: unknown,
	}
	for _, k := range kinds {
		if _, ok := c.parser.Schema.FindNamedType(k.Type); !ok {
			return nil, fmt.Errorf("%s/%s %s: no type %s", k.Group, k.Version, k.Kind, k.Type)
		}
		t := c.parser.Type(k.Type)
		c.kinds[schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}] = &t
	}
	return c, nil
}

// ObjectToTyped implements managedfields.TypeConverter: obj parsed as the
// type of its kind, read from its fields by reflection unless it is
// unstructured already.
func (c *builtinConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	t := c.kinds[obj.GetObjectKind().GroupVersionKind()]
	if t == nil {
		return c.unknown.ObjectToTyped(obj, opts...)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	return t.FromStructured(obj, opts...)
}

// TypedToObject implements managedfields.TypeConverter: the object of a
// value is unstructured, as apimachinery's converters give it back (the
// field manager converts it to the kind's type).
func (c *builtinConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	u := v.AsValue().Unstructured()
	m, ok := u.(map[string]interface{})
	if !ok {
		// apimachinery's words for a value that is not an object.
		return nil, fmt.Errorf("failed to convert value to unstructured for type %T", u)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
