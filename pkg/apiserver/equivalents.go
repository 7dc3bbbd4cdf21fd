package apiserver

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	admissionwebhook "github.com/miniapiserver/miniapiserver/pkg/apiserver/admission/webhook"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// versionKey names a resource (or subresource) at all its versions.
type versionKey struct{ group, resource, subresource string }

// resourceVersions are the endpoints of each resource, at every version
// served, in the order of the group's versions.
type resourceVersions map[versionKey][]*Endpoint

func (rv resourceVersions) add(e *Endpoint) {
	k := versionKey{e.Resource.Group, e.Resource.Resource, e.Subresource}
	rv[k] = append(rv[k], e)
}

// Equivalents implements admissionwebhook.Resources: the other versions
// of a resource are those of its group (built-in or custom). kube also
// counts as equivalent the resources of other groups kept under the same
// key (core and events.k8s.io events); here they are not.
func (s *Server) Equivalents(resource schema.GroupVersionResource, subresource string) []admissionwebhook.Equivalent {
	k := versionKey{resource.Group, resource.Resource, subresource}
	endpoints := s.builtinVersions[k]
	if custom := s.customResources.versions.Load(); len(endpoints) == 0 && custom != nil {
		endpoints = (*custom)[k]
	}
	var out []admissionwebhook.Equivalent
	for _, e := range endpoints {
		if e.Resource == resource {
			continue
		}
		out = append(out, admissionwebhook.Equivalent{Resource: e.Resource, Kind: e.Kind, Convert: convertFunc(e.Storage)})
	}
	return out
}

// convertFunc converts between the versions of the objects of storage: a
// custom resource through its definition's conversion (None or Webhook),
// a built-in through the registry's conversions.
func convertFunc(storage rest.Storage) func(runtime.Object, schema.GroupVersionKind) (runtime.Object, error) {
	if p, ok := storage.(rest.StructureProvider); ok && p.Structure() != nil {
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
	return conversion.Builtin().Convert
}
