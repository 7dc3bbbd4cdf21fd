// Package conversion converts objects between the versions a resource is
// served at. Every resource has one storage version (its hub); a served
// version that differs from it is a spoke, converted to the hub on the way
// in and from it on the way out. The conversion functions of the built-in
// kinds are written here on the k8s.io/api types, with kube's rules
// (including the annotations kube uses to round-trip what a version
// lacks), and registered in one place: Builtin.
//
// It sits in the registry layer, below generic (whose VersionedStore
// converts at the boundary of a Store) and fieldmanager (which converts
// managed fields recorded at other versions); it imports nothing of ours
// but storage-free API types.
package conversion

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Converter converts objects between the kinds (versions) of one resource.
type Converter interface {
	// Convert returns in, an object of one of the kinds the converter
	// knows, as an object of kind to, with to as its TypeMeta; in itself
	// (its TypeMeta set) when it is of kind to already. The result may
	// share memory with in: a caller that keeps using in passes a copy.
	Convert(in runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
}

// Func converts in into out, an empty object of the kind it converts to.
// out may share memory with in.
type Func func(in, out runtime.Object) error

// Registry is a Converter of several families of kinds, each converting
// through its hub. It is filled before use and read-only afterwards.
type Registry struct {
	kinds map[schema.GroupVersionKind]*kindEntry
	// types finds the kind of a typed object whose TypeMeta is empty (list
	// items, objects from New): each registered Go type is one kind.
	types map[reflect.Type]schema.GroupVersionKind
}

type kindEntry struct {
	hub            schema.GroupVersionKind
	newObj         func() runtime.Object
	toHub, fromHub Func // nil for the hub itself
}

var _ Converter = (*Registry)(nil)

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{kinds: map[schema.GroupVersionKind]*kindEntry{}, types: map[reflect.Type]schema.GroupVersionKind{}}
}

// AddHub registers hub, the kind a family of versions is stored as.
func (r *Registry) AddHub(hub schema.GroupVersionKind, newObj func() runtime.Object) error {
	return r.add(hub, &kindEntry{hub: hub, newObj: newObj})
}

// AddSpoke registers spoke, a served version of hub's family, with its
// conversions to and from the hub. hub must be registered first.
func (r *Registry) AddSpoke(spoke, hub schema.GroupVersionKind, newObj func() runtime.Object, toHub, fromHub Func) error {
	if e, ok := r.kinds[hub]; !ok || e.hub != hub {
		return fmt.Errorf("conversion: %v is not a registered hub", hub)
	}
	if toHub == nil || fromHub == nil {
		return fmt.Errorf("conversion: %v needs conversions to and from %v", spoke, hub)
	}
	return r.add(spoke, &kindEntry{hub: hub, newObj: newObj, toHub: toHub, fromHub: fromHub})
}

func (r *Registry) add(gvk schema.GroupVersionKind, e *kindEntry) error {
	if _, ok := r.kinds[gvk]; ok {
		return fmt.Errorf("conversion: %v is registered already", gvk)
	}
	r.kinds[gvk] = e
	obj := e.newObj()
	t := reflect.TypeOf(obj)
	_, unstructured := obj.(runtime.Unstructured)
	if _, shared := r.types[t]; shared || unstructured {
		// One Go type for several kinds (unstructured objects): those
		// are told apart by their TypeMeta only.
		r.types[t] = schema.GroupVersionKind{}
	} else {
		r.types[t] = gvk
	}
	return nil
}

// Hub returns the hub of gvk's family, and whether gvk is registered.
func (r *Registry) Hub(gvk schema.GroupVersionKind) (schema.GroupVersionKind, bool) {
	e, ok := r.kinds[gvk]
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	return e.hub, true
}

// KindOf returns the registered kind of obj: the one its Go type stands
// for, else its TypeMeta's.
func (r *Registry) KindOf(obj runtime.Object) (schema.GroupVersionKind, bool) {
	if gvk := r.types[reflect.TypeOf(obj)]; !gvk.Empty() {
		return gvk, true
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	_, ok := r.kinds[gvk]
	return gvk, ok
}

// Convert implements Converter: a spoke converts to its hub, the hub to a
// spoke, and a spoke to another through the hub.
func (r *Registry) Convert(in runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	from, ok := r.KindOf(in)
	if !ok {
		return nil, fmt.Errorf("conversion: no conversion from %T (%v)", in, in.GetObjectKind().GroupVersionKind())
	}
	if from == to {
		// As the scheme's unsafe conversion does: the object itself,
		// naming its kind (the field manager needs it).
		in.GetObjectKind().SetGroupVersionKind(to)
		return in, nil
	}
	src, dst := r.kinds[from], r.kinds[to]
	if dst == nil || dst.hub != src.hub {
		return nil, fmt.Errorf("conversion: no conversion from %v to %v", from, to)
	}
	obj := in
	if src.toHub != nil {
		hub := r.kinds[src.hub].newObj()
		if err := src.toHub(obj, hub); err != nil {
			return nil, fmt.Errorf("conversion: %v to %v: %w", from, src.hub, err)
		}
		obj = hub
	}
	if dst.fromHub != nil {
		out := dst.newObj()
		if err := dst.fromHub(obj, out); err != nil {
			return nil, fmt.Errorf("conversion: %v to %v: %w", src.hub, to, err)
		}
		obj = out
	}
	obj.GetObjectKind().SetGroupVersionKind(to)
	return obj, nil
}
