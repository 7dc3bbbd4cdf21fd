package customresource

import (
	"errors"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
)

// newConverter returns the conversions between the definition's versions,
// with the storage version as hub: every version converts to it and from
// it. An object converted is pruned to what its new version's schema
// declares, as kube's converter of custom resources prunes.
func (r *resource) newConverter(crd *apiextensionsv1.CustomResourceDefinition, resolver webhookclient.ServiceResolver) (*conversion.Registry, error) {
	var convert func(to schema.GroupVersion) conversion.Func
	switch s := crd.Spec.Conversion; {
	case s == nil || s.Strategy == apiextensionsv1.NoneConverter:
		convert = r.rewriteAPIVersion
	case s.Strategy == apiextensionsv1.WebhookConverter:
		w, err := newWebhookConverter(crd, resolver)
		if err != nil {
			return nil, err
		}
		r.webhook = w
		convert = w.conversion(r)
	default:
		return nil, fmt.Errorf("unknown conversion strategy %q", s.Strategy)
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

var _ conversion.Converter = (*resource)(nil)

// Convert implements conversion.Converter: the definition's conversion,
// whose webhook's failures reach the client in kube's words.
func (r *resource) Convert(in runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	out, err := r.converter.Convert(in, to)
	var failed *conversionError
	if errors.As(err, &failed) {
		return nil, failed
	}
	return out, err
}

// copyingConvertor converts copies of what it is given: the conversions
// of unstructured objects reuse their content, which the field manager
// keeps using (kube gives it its "safe" converter likewise).
type copyingConvertor struct{ runtime.ObjectConvertor }

// Convert implements runtime.ObjectConvertor.
func (c copyingConvertor) Convert(in, out, context interface{}) error {
	if obj, ok := in.(runtime.Object); ok {
		in = obj.DeepCopyObject()
	}
	return c.ObjectConvertor.Convert(in, out, context)
}

// ConvertToVersion implements runtime.ObjectConvertor.
func (c copyingConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	return c.ObjectConvertor.ConvertToVersion(in.DeepCopyObject(), target)
}
