package admissionpolicy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Resource is one served endpoint as policies see it: what a paramKind
// names, and what matchPolicy Equivalent compares.
type Resource struct {
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Namespaced  bool
	Storage     rest.Storage
}

// Resources answers the questions kube's RESTMapper and equivalent
// resource registry answer for admission policies, from the server's
// endpoints.
type Resources struct {
	byKind map[schema.GroupVersionKind]*Resource // main resources only
	byGVR  map[endpointKey]*Resource
	// equivalents lists the endpoints sharing one storage (the versions
	// of a resource, and a resource served by two groups), as kube's
	// registry groups them by their storage prefix.
	equivalents map[equivalenceKey][]schema.GroupVersionResource
}

type endpointKey struct {
	gvr         schema.GroupVersionResource
	subresource string
}

type equivalenceKey struct {
	storage     schema.GroupKind
	resource    string
	subresource string
}

// NewResources indexes the endpoints.
func NewResources(endpoints []Resource) *Resources {
	r := &Resources{
		byKind:      map[schema.GroupVersionKind]*Resource{},
		byGVR:       map[endpointKey]*Resource{},
		equivalents: map[equivalenceKey][]schema.GroupVersionResource{},
	}
	for i := range endpoints {
		e := &endpoints[i]
		r.byGVR[endpointKey{e.Resource, e.Subresource}] = e
		if e.Subresource == "" {
			if _, seen := r.byKind[e.Kind]; !seen {
				r.byKind[e.Kind] = e
			}
		}
		k := r.equivalenceKey(e)
		r.equivalents[k] = append(r.equivalents[k], e.Resource)
	}
	return r
}

func (r *Resources) equivalenceKey(e *Resource) equivalenceKey {
	stored := rest.StoredGroupKind(e.Storage, e.Kind)
	if e.Subresource != "" {
		// A subresource shares the storage of its resource.
		if main, ok := r.byGVR[endpointKey{e.Resource, ""}]; ok {
			stored = rest.StoredGroupKind(main.Storage, main.Kind)
		}
	}
	return equivalenceKey{storage: stored, resource: e.Resource.Resource, subresource: e.Subresource}
}

// ForKind returns the main resource serving kind.
func (r *Resources) ForKind(kind schema.GroupVersionKind) (*Resource, bool) {
	e, ok := r.byKind[kind]
	return e, ok
}

// KindFor returns the kind gvr's subresource reads and writes (empty if
// unknown).
func (r *Resources) KindFor(gvr schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if e, ok := r.byGVR[endpointKey{gvr, subresource}]; ok {
		return e.Kind
	}
	return schema.GroupVersionKind{}
}

// EquivalentResourcesFor returns the resources sharing gvr's storage,
// gvr among them.
func (r *Resources) EquivalentResourcesFor(gvr schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	e, ok := r.byGVR[endpointKey{gvr, subresource}]
	if !ok {
		return nil
	}
	return r.equivalents[r.equivalenceKey(e)]
}

// convert returns a copy of obj, an object of a served resource, at the
// kind to, through the conversions of the resource serving to.
func (r *Resources) convert(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	e, ok := r.byKind[to]
	if !ok {
		return nil, fmt.Errorf("unable to convert to %v: no resource serves it", to)
	}
	out, err := conversion.ForStorage(e.Storage)(obj.DeepCopyObject(), to)
	if err != nil {
		return nil, fmt.Errorf("unable to convert to %v: %w", to, err)
	}
	return out, nil
}
