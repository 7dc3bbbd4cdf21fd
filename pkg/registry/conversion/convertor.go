package conversion

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ObjectConvertor returns r as the runtime.ObjectConvertor the field
// manager converts managed fields with (an apply at autoscaling/v1 after
// one at autoscaling/v2 compares the object at both versions): the kinds r
// knows convert through their hub, within their group only, as kube's
// scheme converts them (kube's internal types are per group). So, as in
// kube, the managed fields one group's write records on an object served
// by two groups (events) are dropped by the next write through the
// other. Kinds r does not know are left to fallback.
func (r *Registry) ObjectConvertor(fallback runtime.ObjectConvertor) runtime.ObjectConvertor {
	return &objectConvertor{r: r, fallback: fallback}
}

type objectConvertor struct {
	r        *Registry
	fallback runtime.ObjectConvertor
}

// Convert implements runtime.ObjectConvertor: out gets in's content at
// out's kind.
func (c *objectConvertor) Convert(in, out, context interface{}) error {
	inObj, inOK := in.(runtime.Object)
	outObj, outOK := out.(runtime.Object)
	if !inOK || !outOK {
		return c.fallback.Convert(in, out, context)
	}
	from, known := c.r.KindOf(inObj)
	to, knownOut := c.r.KindOf(outObj)
	if !known || !knownOut {
		return c.fallback.Convert(in, out, context)
	}
	inObj, err := c.r.typed(inObj, from)
	if err != nil {
		return err
	}
	converted, err := c.r.Convert(inObj, to)
	if err != nil {
		return err
	}
	dst, src := reflect.ValueOf(out), reflect.ValueOf(converted)
	if dst.Type() != src.Type() {
		return fmt.Errorf("conversion: cannot store %T in %T", converted, out)
	}
	dst.Elem().Set(src.Elem())
	return nil
}

// ConvertToVersion implements runtime.ObjectConvertor.
//
// The field manager hands it the objects of a request at the request's
// version (kube hands its internal objects), and unstructured objects of
// its own (its typed values made objects again). An unstructured object is
// made typed, as the scheme's conversion does. A typed object of a served
// version other than its hub, asked for at its own version, comes back as
// storing it makes it (through the hub and back: autoscaling/v1 gets its
// CPU target and round-trip annotations), which is what kube's field
// manager sees of the internal object; the empty object (the live state of
// a create) has no stored form and comes back as is.
func (c *objectConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	from, ok := c.r.KindOf(in)
	if !ok {
		return c.fallback.ConvertToVersion(in, target)
	}
	_, wasUnstructured := in.(runtime.Unstructured)
	in, err := c.r.typed(in, from)
	if err != nil {
		return nil, err
	}
	to, ok := c.r.targetKind(from, target)
	if !ok {
		return nil, runtime.NewNotRegisteredErrForTarget("miniapiserver", reflect.TypeOf(in), target)
	}
	if hub := c.r.kinds[from].hub; to == from && from != hub && !wasUnstructured && !isEmpty(in) {
		stored, err := c.r.Convert(in.DeepCopyObject(), hub)
		if err != nil {
			return nil, err
		}
		return c.r.Convert(stored, to)
	}
	return c.r.Convert(in, to)
}

// isEmpty reports an object with no metadata at all: a new object.
func isEmpty(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetName() == "" && m.GetGenerateName() == "" && m.GetUID() == ""
}

// ConvertFieldLabel implements runtime.ObjectConvertor.
func (c *objectConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.fallback.ConvertFieldLabel(gvk, label, value)
}

// typed returns in, of kind gvk, as gvk's Go type when in is unstructured
// and that type is not.
func (r *Registry) typed(in runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	u, ok := in.(runtime.Unstructured)
	if !ok {
		return in, nil
	}
	out := r.kinds[gvk].newObj()
	if _, isUnstructured := out.(runtime.Unstructured); isUnstructured {
		return in, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), out); err != nil {
		return nil, fmt.Errorf("conversion: %v: %w", gvk, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// targetKind is the kind of from's family, in from's group, that target
// asks for.
func (r *Registry) targetKind(from schema.GroupVersionKind, target runtime.GroupVersioner) (schema.GroupVersionKind, bool) {
	hub := r.kinds[from].hub
	family := []schema.GroupVersionKind{from}
	for gvk, e := range r.kinds {
		if e.hub == hub && gvk != from && gvk.Group == from.Group {
			family = append(family, gvk)
		}
	}
	to, ok := target.KindForGroupVersionKinds(family)
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	if e, known := r.kinds[to]; !known || e.hub != hub {
		return schema.GroupVersionKind{}, false
	}
	return to, true
}
