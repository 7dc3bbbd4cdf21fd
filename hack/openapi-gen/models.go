package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// models builds the OpenAPI definition of every Go type reachable from
// the roots, as kube-openapi's openapi-gen would generate it: structure
// from reflection, descriptions and markers from the source.
type models struct {
	src  *sourceIndex
	ref  common.ReferenceCallback
	defs map[string]common.OpenAPIDefinition
	// types maps a definition name to its Go type.
	types map[string]reflect.Type
}

// modelName is the definition name of a Go type: its OpenAPIModelName
// ("io.k8s.api.core.v1.Pod"), or its package path and name.
func modelName(t reflect.Type) string {
	return util.GetCanonicalTypeName(reflect.New(t).Interface())
}

// collectTypes returns the named struct types reachable from roots
// through fields, and the packages they live in.
func collectTypes(roots []reflect.Type) ([]reflect.Type, []string) {
	seen := map[reflect.Type]bool{}
	pkgs := map[string]bool{}
	var out []reflect.Type
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Name() != "" && t.PkgPath() != "" {
				pkgs[t.PkgPath()] = true
			}
			if t.Kind() == reflect.Map {
				walk(t.Key())
			}
			t = t.Elem()
		}
		if t.PkgPath() != "" {
			pkgs[t.PkgPath()] = true
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		out = append(out, t)
		for i := 0; i < t.NumField(); i++ {
			walk(t.Field(i).Type)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return out, paths
}

// definitions returns the definitions of types, with references made by
// ref.
func definitions(src *sourceIndex, types []reflect.Type, ref common.ReferenceCallback) (map[string]common.OpenAPIDefinition, error) {
	m := &models{src: src, ref: ref, defs: map[string]common.OpenAPIDefinition{}, types: map[string]reflect.Type{}}
	for _, t := range types {
		name := modelName(t)
		if prev, ok := m.types[name]; ok && prev != t {
			return nil, fmt.Errorf("%s names both %v and %v", name, prev, t)
		}
		m.types[name] = t
		def, err := m.define(t)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", t, err)
		}
		m.defs[name] = def
	}
	return m.defs, nil
}

// The methods by which a type chooses its own schema.
type (
	schemaTypeFormat interface {
		OpenAPISchemaType() []string
		OpenAPISchemaFormat() string
	}
	v3OneOfTypes interface {
		OpenAPIV3OneOfTypes() []string
	}
	v2Definition interface {
		OpenAPIDefinition() common.OpenAPIDefinition
	}
	v3Definition interface {
		OpenAPIV3Definition() common.OpenAPIDefinition
	}
)

// define builds the definition of the struct type t.
func (m *models) define(t reflect.Type) (common.OpenAPIDefinition, error) {
	comments := m.src.typeComments(t.PkgPath(), t.Name())
	sample := reflect.New(t).Interface()
	v2, hasV2 := sample.(v2Definition)
	v3, hasV3 := sample.(v3Definition)
	if tf, ok := sample.(schemaTypeFormat); ok {
		return m.defineTypeFormat(t, comments, tf)
	}
	switch {
	case hasV2 && hasV3:
		return common.EmbedOpenAPIDefinitionIntoV2Extension(v3.OpenAPIV3Definition(), v2.OpenAPIDefinition()), nil
	case hasV2:
		return v2.OpenAPIDefinition(), nil
	case hasV3:
		return v3.OpenAPIV3Definition(), nil
	}

	var deps []reflect.Type
	props, required, err := m.members(t, &deps)
	if err != nil {
		return common.OpenAPIDefinition{}, err
	}
	s := spec.Schema{SchemaProps: spec.SchemaProps{Description: description(comments), Type: []string{"object"}}}
	if len(props) > 0 {
		s.Properties = props
	}
	if len(required) > 0 {
		s.Required = required
	}
	if err := m.structExtensions(t, comments, &s); err != nil {
		return common.OpenAPIDefinition{}, err
	}
	def := common.OpenAPIDefinition{Schema: s}
	seen := map[string]bool{}
	for _, d := range deps {
		if typ, _ := simpleType(d); typ != "" {
			continue // time.Time
		}
		if name := modelName(d); !seen[name] {
			seen[name] = true
			def.Dependencies = append(def.Dependencies, name)
		}
	}
	sort.Strings(def.Dependencies)
	return def, nil
}

// defineTypeFormat is the definition of a type that names its own type
// and format (Time, Quantity, IntOrString): no properties, and in v3 a
// oneOf where the type names one.
func (m *models) defineTypeFormat(t reflect.Type, comments []string, tf schemaTypeFormat) (common.OpenAPIDefinition, error) {
	v2 := spec.Schema{SchemaProps: spec.SchemaProps{Description: description(comments), Type: tf.OpenAPISchemaType(), Format: tf.OpenAPISchemaFormat()}}
	if err := m.structExtensions(t, comments, &v2); err != nil {
		return common.OpenAPIDefinition{}, err
	}
	sample := reflect.New(t).Interface()
	if v3, ok := sample.(v3Definition); ok {
		return common.EmbedOpenAPIDefinitionIntoV2Extension(v3.OpenAPIV3Definition(), common.OpenAPIDefinition{Schema: v2}), nil
	}
	if oneOf, ok := sample.(v3OneOfTypes); ok {
		v3 := spec.Schema{SchemaProps: spec.SchemaProps{
			Description: v2.Description,
			OneOf:       common.GenerateOpenAPIV3OneOfSchema(oneOf.OpenAPIV3OneOfTypes()),
			Format:      tf.OpenAPISchemaFormat(),
		}}
		if err := m.structExtensions(t, comments, &v3); err != nil {
			return common.OpenAPIDefinition{}, err
		}
		return common.EmbedOpenAPIDefinitionIntoV2Extension(common.OpenAPIDefinition{Schema: v3}, common.OpenAPIDefinition{Schema: v2}), nil
	}
	return common.OpenAPIDefinition{Schema: v2}, nil
}

// structExtensions adds the extensions of a type's comment (+structType,
// ...) and its unions.
func (m *models) structExtensions(t reflect.Type, comments []string, s *spec.Schema) error {
	ext, err := extensions(comments)
	if err != nil {
		return err
	}
	us, err := m.unions(t, comments)
	if err != nil {
		return err
	}
	if len(us) > 0 {
		list := make([]interface{}, len(us))
		for i := range us {
			list[i] = us[i].value()
		}
		ext["x-kubernetes-unions"] = list
	}
	for k, v := range ext {
		s.AddExtension(k, v)
	}
	return nil
}

func (m *models) unions(t reflect.Type, comments []string) ([]union, error) {
	members, types := m.structMembers(t)
	return unions(comments, members, func(mb *member) ([]union, error) {
		et := types[mb.goName]
		return m.unions(et, m.src.typeComments(et.PkgPath(), et.Name()))
	})
}

// structMembers returns the fields of t with their comments, and the
// type of each (pointers removed), by Go name.
func (m *models) structMembers(t reflect.Type) ([]member, map[string]reflect.Type) {
	var out []member
	types := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, has := f.Tag.Lookup("json")
		out = append(out, member{
			goName:   f.Name,
			jsonTag:  tag,
			hasJSON:  has,
			embedded: f.Anonymous,
			comments: m.src.fieldComments(t.PkgPath(), t.Name(), f.Name),
		})
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		types[f.Name] = ft
	}
	return out, types
}

// members builds the properties of t, inlining embedded members, and
// lists the required ones in field order.
func (m *models) members(t reflect.Type, deps *[]reflect.Type) (map[string]spec.Schema, []string, error) {
	props := map[string]spec.Schema{}
	var required []string
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		members, _ := m.structMembers(t)
		for i := range members {
			mb := &members[i]
			f := t.Field(i)
			if hasOpenAPIGenValue(mb.comments, "false") {
				continue
			}
			if mb.inline() {
				if err := walk(f.Type); err != nil {
					return err
				}
				continue
			}
			name := mb.jsonName()
			if name == "" {
				continue
			}
			opt, err := mb.optional()
			if err != nil {
				return err
			}
			if !opt {
				required = append(required, name)
			}
			p, err := m.property(mb, f.Type, t.PkgPath(), deps)
			if err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			props[name] = p
		}
		return nil
	}
	if err := walk(t); err != nil {
		return nil, nil, err
	}
	return props, required, nil
}

// property is the schema of one member of a struct of package pkg.
func (m *models) property(mb *member, ft reflect.Type, pkg string, deps *[]reflect.Type) (spec.Schema, error) {
	var s spec.Schema
	ext, err := extensions(mb.comments)
	if err != nil {
		return s, err
	}
	for k, v := range ext {
		s.AddExtension(k, v)
	}
	enum := m.enumType(ft)
	lines := mb.comments
	if enum != nil {
		lines = append(append([]string(nil), lines...), enumDescription(m.enumValues(enum))...)
	}
	s.Description = description(lines)
	if parts := strings.Split(mb.jsonTag, ","); len(parts) > 1 && parts[1] == "string" {
		s.Type = []string{"string"}
		return s, nil
	}
	def, err := m.defaultValue(mb.comments, ft, mb.omitEmpty(), pkg)
	if err != nil {
		return s, err
	}
	s.Default = def
	t := resolve(ft)
	if typ, format := simpleType(t); typ != "" {
		s.Type, s.Format = []string{typ}, format
		if enum != nil {
			s.Enum = m.enumList(enum)
		}
		return s, nil
	}
	if err := m.typeSchema(t, &s, deps); err != nil {
		return s, err
	}
	return s, nil
}

// typeSchema fills s with the schema of t (aliases and pointers resolved)
// when it is a map, a slice, a struct (a reference) or an interface.
func (m *models) typeSchema(t reflect.Type, s *spec.Schema, deps *[]reflect.Type) error {
	switch t.Kind() {
	case reflect.Map:
		if resolve(t.Key()).Kind() != reflect.String {
			return fmt.Errorf("map with non-string keys are not supported by OpenAPI in %v", t)
		}
		s.Type = []string{"object"}
		elem, err := m.elemSchema(t.Elem(), deps)
		if err != nil {
			return err
		}
		s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: elem}
	case reflect.Slice, reflect.Array:
		s.Type = []string{"array"}
		elem, err := m.elemSchema(t.Elem(), deps)
		if err != nil {
			return err
		}
		s.Items = &spec.SchemaOrArray{Schema: elem}
	case reflect.Struct:
		*deps = append(*deps, t)
		s.Ref = m.ref(modelName(t))
	case reflect.Interface:
		// no schema: openapi-gen declares no interfaces
	default:
		return fmt.Errorf("cannot generate spec for type %v", t)
	}
	return nil
}

// elemSchema is the schema of the items of a slice or the values of a map.
func (m *models) elemSchema(et reflect.Type, deps *[]reflect.Type) (*spec.Schema, error) {
	t := resolve(et)
	s := &spec.Schema{}
	if typ, format := simpleType(t); typ != "" {
		s.Type, s.Format = []string{typ}, format
		if enum := m.enumType(et); enum != nil {
			s.Enum = m.enumList(enum)
		}
		return s, nil
	}
	if t.Kind() == reflect.Interface {
		return nil, fmt.Errorf("element kind %v is not supported", t.Kind())
	}
	return s, m.typeSchema(t, s, deps)
}

// resolve removes pointers; a named type that is not a struct stands
// for its underlying type (gengo calls such types aliases).
func resolve(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// simpleType is the OpenAPI type and format of a type that maps to one
// ("" when it does not): the Go basic kinds, []byte and time.Time.
func simpleType(t reflect.Type) (string, string) {
	var name string
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			name = "[]byte"
		}
	case reflect.Struct:
		name = t.String() // time.Time
	case reflect.Interface:
		if t.Name() == "" && t.NumMethod() == 0 {
			name = "interface{}"
		}
	default:
		name = t.Kind().String()
	}
	return common.OpenAPITypeFormat(name)
}

// enumType is t (or what it points to) when it is a string type marked
// +enum.
func (m *models) enumType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String || t.Name() == "" || t.PkgPath() == "" {
		return nil
	}
	if !hasTag(m.src.typeComments(t.PkgPath(), t.Name()), tagEnum) {
		return nil
	}
	return t
}

// enumValues returns the values of an enum type, one per distinct value
// (the one with the longest comment where constants share a value).
func (m *models) enumValues(t reflect.Type) []enumValue {
	var out []enumValue
	for _, c := range m.src.enumValues(t.PkgPath(), t.Name()) {
		v, err := m.src.eval(c.expr, c.pkg.path, c.imports)
		s, ok := v.(string)
		if err != nil || !ok {
			continue
		}
		nv := enumValue{name: c.name, value: s, comment: strings.Join(c.comments, " ")}
		replaced := false
		for i := range out {
			if out[i].value == s {
				if len(out[i].comment) < len(nv.comment) || (len(out[i].comment) == len(nv.comment) && out[i].comment > nv.comment) {
					out[i] = nv
				}
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, nv)
		}
	}
	return out
}

// enumList is the "enum" of a schema: the values, sorted as quoted Go
// strings.
func (m *models) enumList(t reflect.Type) []interface{} {
	values := m.enumValues(t)
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v.value)
	}
	sort.Strings(quoted)
	out := make([]interface{}, len(quoted))
	for i, q := range quoted {
		var s string
		_ = json.Unmarshal([]byte(q), &s)
		out[i] = s
	}
	return out
}

var refPattern = regexp.MustCompile(`^ref\(([^"]+)\)$`)

// defaultValue is a member's default: its +default marker (on the member,
// else on its type), or the zero value a non-pointer, non-omitempty
// member always has.
func (m *models) defaultValue(comments []string, t reflect.Type, omitEmpty bool, pkg string) (interface{}, error) {
	tag, pkg, err := m.defaultTag(comments, t, pkg)
	if err != nil {
		return nil, err
	}
	var def interface{}
	if tag != "" {
		if r := refPattern.FindStringSubmatch(tag); r != nil {
			name := r[1]
			if i := strings.LastIndex(name, "."); i >= 0 {
				pkg, name = name[:i], name[i+1:]
			}
			if def, err = m.src.constValue(pkg, name); err != nil {
				return nil, err
			}
		} else if err := json.Unmarshal([]byte(tag), &def); err != nil {
			return nil, fmt.Errorf("failed to unmarshal default: %v", err)
		}
	}
	enforced := enforcedDefault(t, omitEmpty)
	if enforced == nil {
		return def, nil
	}
	if def != nil && !reflect.DeepEqual(def, enforced) {
		return nil, fmt.Errorf("invalid default value (%#v) for non-pointer/non-omitempty", def)
	}
	return enforced, nil
}

// defaultTag finds the +default marker of a member: on the member, else
// on its type, what the type points to, or the named type's own type.
func (m *models) defaultTag(comments []string, t reflect.Type, pkg string) (string, string, error) {
	for {
		values := commentTags(comments)[tagDefault]
		if len(values) > 1 {
			return "", "", fmt.Errorf("multiple values are not allowed for tag %s", tagDefault)
		}
		if len(values) == 1 && values[0] != "" {
			return values[0], pkg, nil
		}
		if t == nil {
			return "", "", nil
		}
		comments, pkg = nil, t.PkgPath()
		if t.Name() != "" && t.PkgPath() != "" {
			comments = m.src.typeComments(t.PkgPath(), t.Name())
		}
		switch {
		case t.Kind() == reflect.Pointer:
			t = t.Elem()
		case t.Name() != "" && t.PkgPath() != "" && t.Kind() != reflect.Struct && t.Kind() != reflect.Interface:
			t = underlying(t)
		default:
			t = nil
		}
	}
}

// underlying is the unnamed type of a named non-struct type.
func underlying(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Map:
		return reflect.MapOf(t.Key(), t.Elem())
	case reflect.Slice:
		return reflect.SliceOf(t.Elem())
	case reflect.Array:
		return reflect.ArrayOf(t.Len(), t.Elem())
	}
	if t.Kind() <= reflect.Complex128 || t.Kind() == reflect.String {
		// The predeclared type of the same kind has no package.
		return basicTypes[t.Kind()]
	}
	return nil
}

var basicTypes = map[reflect.Kind]reflect.Type{
	reflect.Bool: reflect.TypeOf(false), reflect.String: reflect.TypeOf(""),
	reflect.Int: reflect.TypeOf(int(0)), reflect.Int8: reflect.TypeOf(int8(0)), reflect.Int16: reflect.TypeOf(int16(0)),
	reflect.Int32: reflect.TypeOf(int32(0)), reflect.Int64: reflect.TypeOf(int64(0)),
	reflect.Uint: reflect.TypeOf(uint(0)), reflect.Uint8: reflect.TypeOf(uint8(0)), reflect.Uint16: reflect.TypeOf(uint16(0)),
	reflect.Uint32: reflect.TypeOf(uint32(0)), reflect.Uint64: reflect.TypeOf(uint64(0)),
	reflect.Float32: reflect.TypeOf(float32(0)), reflect.Float64: reflect.TypeOf(float64(0)),
}

// enforcedDefault is the default openapi-gen gives every member that is
// always serialized: {} for a struct without custom unmarshalling, the
// zero value for a basic type without omitempty; nil otherwise.
func enforcedDefault(t reflect.Type, omitEmpty bool) interface{} {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface:
		return nil
	case reflect.Struct:
		if _, ok := reflect.PointerTo(t).MethodByName("UnmarshalJSON"); ok {
			return nil // its zero value unmarshals from null
		}
		if t.NumField() == 1 && t.Field(0).Anonymous {
			return enforcedDefault(t.Field(0).Type, omitEmpty)
		}
		return map[string]interface{}{}
	}
	if omitEmpty {
		return nil
	}
	zero, _ := common.OpenAPIZeroValue(t.Kind().String())
	return zero
}
