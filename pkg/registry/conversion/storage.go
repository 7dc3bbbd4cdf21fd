package conversion

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ConvertFunc converts obj, an object of a resource at any version it is
// served at, to the kind to.
type ConvertFunc func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)

// ForStorage returns how the objects of storage convert between the
// versions it is served at: a custom resource's through its definition's
// conversion (None or Webhook), a built-in's through Builtin.
func ForStorage(storage rest.Storage) ConvertFunc {
	if p, ok := storage.(rest.StructureProvider); ok && p.Structure() != nil && p.Structure().Convertor != nil {
		convertor := p.Structure().Convertor
		return func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
			out, err := convertor.ConvertToVersion(obj, to.GroupVersion())
			if err != nil {
				return nil, err
			}
			if got := out.GetObjectKind().GroupVersionKind(); got != to {
				return nil, fmt.Errorf("converted to %v, not %v", got, to)
			}
			return out, nil
		}
	}
	return Builtin().Convert
}
