package structure

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/miniapiserver/miniapiserver/api/openapi"
)

// TestTypesMatchDefinitions checks the generated types against what
// managedfields.NewTypeConverter derives from definitions.json at run
// time (schemaconv, not preserving unknown fields), so that the two
// cannot drift: a change of kube-openapi's conversion shows here even
// when the definitions do not change.
func TestTypesMatchDefinitions(t *testing.T) {
	defs, err := openapi.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	want, err := schemaconv.ToSchemaFromOpenAPI(defs, false)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(want.Types, func(i, j int) bool { return want.Types[i].Name < want.Types[j].Name })
	// The unexported fields are the lookups' caches; schemaconv lists the
	// fields of an object or a union in the order of a map's iteration;
	// an empty object's default is a nil map here (static data, where an
	// empty map is made at init), the same empty object to
	// structured-merge-diff.
	opts := cmp.Options{
		cmpopts.IgnoreUnexported(schema.Map{}),
		cmp.FilterPath(isDefault, cmpopts.EquateEmpty()),
		cmpopts.SortSlices(func(a, b schema.StructField) bool { return a.Name < b.Name }),
		cmpopts.SortSlices(func(a, b schema.UnionField) bool { return a.FieldName < b.FieldName }),
	}
	if diff := cmp.Diff(want.Types, Types, opts); diff != "" {
		t.Errorf("Types differ from definitions.json's (-want +got); run go run ./hack/openapi-gen:\n%s", diff)
	}
}

// isDefault is whether p is (in) a field's default.
func isDefault(p cmp.Path) bool {
	for _, s := range p {
		if f, ok := s.(cmp.StructField); ok && f.Name() == "Default" {
			return true
		}
	}
	return false
}

// TestKindsHaveTypes checks that every kind names a type of Types, once.
func TestKindsHaveTypes(t *testing.T) {
	names := map[string]bool{}
	for _, td := range Types {
		names[td.Name] = true
	}
	seen := map[Kind]bool{}
	for _, k := range Kinds {
		if !names[k.Type] {
			t.Errorf("%+v: no such type", k)
		}
		key := Kind{Group: k.Group, Version: k.Version, Kind: k.Kind}
		if seen[key] {
			t.Errorf("%+v: listed twice", key)
		}
		seen[key] = true
	}
	if len(Kinds) == 0 {
		t.Error("no kinds")
	}
}
