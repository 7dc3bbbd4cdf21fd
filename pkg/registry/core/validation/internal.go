package validation

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/diff"
)

// InternalDiff is the diff kube's immutability messages show: kube diffs
// its internal types, so the diff is of their JSON (see InternalValue).
func InternalDiff(a, b any) string {
	return diff.Diff(InternalValue(a), InternalValue(b))
}

// InternalValue returns v as kube prints a value of its internal API
// types in a field error (field.Invalid(path, spec, ...)): the fields of
// the versioned type under their Go names, none omitted, in declaration
// order. kube's internal types carry no JSON tags, so its messages show
// {"MatchingPrecedence":2,...} where the wire shows
// {"matchingPrecedence":2}. Values that marshal themselves (times,
// quantities) keep their form.
//
// It holds where the internal type has the versioned type's fields in
// the same order, as most kinds do; a kind whose internal type has other
// fields spells its shape out. Types of k8s.io/apimachinery (ObjectMeta,
// GroupResource, Condition) are shared by both and keep their JSON names.
func InternalValue(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return v
	}
	return untag(rv, untaggedType(rv.Type())).Interface()
}

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	untaggedTypes sync.Map // reflect.Type -> reflect.Type
)

// untaggedType is t with every struct in it rebuilt without field tags.
func untaggedType(t reflect.Type) reflect.Type {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) || strings.HasPrefix(t.PkgPath(), "k8s.io/apimachinery/") {
		return t
	}
	if u, ok := untaggedTypes.Load(t); ok {
		return u.(reflect.Type)
	}
	var u reflect.Type
	switch t.Kind() {
	case reflect.Pointer:
		u = reflect.PointerTo(untaggedType(t.Elem()))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return t // []byte stays base64
		}
		u = reflect.SliceOf(untaggedType(t.Elem()))
	case reflect.Map:
		u = reflect.MapOf(t.Key(), untaggedType(t.Elem()))
	case reflect.Struct:
		fields := make([]reflect.StructField, 0, t.NumField())
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			ft := untaggedType(f.Type)
			// An embedded struct stays embedded (its fields print
			// inline, as kube's internal EphemeralContainer's do) where
			// reflect can build it: a type without methods.
			embedded := f.Anonymous && ft.Kind() == reflect.Struct && ft.NumMethod() == 0
			fields = append(fields, reflect.StructField{Name: f.Name, Type: ft, Anonymous: embedded})
		}
		u = reflect.StructOf(fields)
	default:
		return t
	}
	untaggedTypes.Store(t, u)
	return u
}

// untag copies v into a value of type u (untaggedType of v's type).
func untag(v reflect.Value, u reflect.Type) reflect.Value {
	if v.Type() == u {
		return v
	}
	out := reflect.New(u).Elem()
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			p := reflect.New(u.Elem())
			p.Elem().Set(untag(v.Elem(), u.Elem()))
			out.Set(p)
		}
	case reflect.Slice:
		if !v.IsNil() {
			s := reflect.MakeSlice(u, v.Len(), v.Len())
			for i := 0; i < v.Len(); i++ {
				s.Index(i).Set(untag(v.Index(i), u.Elem()))
			}
			out.Set(s)
		}
	case reflect.Map:
		if !v.IsNil() {
			m := reflect.MakeMapWithSize(u, v.Len())
			for it := v.MapRange(); it.Next(); {
				m.SetMapIndex(it.Key(), untag(it.Value(), u.Elem()))
			}
			out.Set(m)
		}
	case reflect.Struct:
		j := 0
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			out.Field(j).Set(untag(v.Field(i), u.Field(j).Type))
			j++
		}
	}
	return out
}
