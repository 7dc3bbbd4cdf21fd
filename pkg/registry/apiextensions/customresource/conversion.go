package customresource

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
)

// newConverter returns the conversions between the definition's versions,
// with the storage version as hub: every version converts to it and from
// it. An object converted is pruned to what its new version's schema
// declares, as kube's converter of custom resources prunes.
func (r *resource) newConverter(crd *apiextensionsv1.CustomResourceDefinition) (*conversion.Registry, error) {
	var convert func(to schema.GroupVersion) conversion.Func
	switch s := crd.Spec.Conversion; {
	case s == nil || s.Strategy == apiextensionsv1.NoneConverter:
		convert = r.rewriteAPIVersion
	default:
		return nil, fmt.Errorf("conversion strategy %q is not supported", s.Strategy)
	}
	newObj := func() runtime.Object { return &unstructured.Unstructured{} }
	reg := conversion.NewRegistry()
	hub := r.storage.gvk
	if err := reg.AddHub(hub, newObj); err != nil {
		return nil, err
	}
	for _, v := range r.versions {
		if v == r.storage {
			continue
		}
		if err := reg.AddSpoke(v.gvk, hub, newObj, convert(hub.GroupVersion()), convert(v.gvk.GroupVersion())); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// rewriteAPIVersion is conversion None: the same fields, under another
// apiVersion (then pruned to its schema). The result shares in's content.
func (r *resource) rewriteAPIVersion(to schema.GroupVersion) conversion.Func {
	return func(in, out runtime.Object) error {
		src, ok := in.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("cannot convert %T", in)
		}
		dst := out.(*unstructured.Unstructured)
		dst.Object = src.Object
		dst.SetAPIVersion(to.String())
		_, err := r.coerce(dst.Object, coerceOptions{})
		return err
	}
}
