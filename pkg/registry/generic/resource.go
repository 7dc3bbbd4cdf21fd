package generic

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Resource declares one served resource, completely: a
// RESTStorageProvider lists its resources as Resource values, and Install
// builds each into a Store (which never changes afterwards) plus the
// subresources served over it. Adding a resource is a declaration and,
// where it needs one, a small strategy; its hooks, extra teardown and
// subresources are part of the declaration, never set on a built Store.
type Resource struct {
	// Name is the plural resource name ("deployments"); Singular its
	// singular ("deployment").
	Name     string
	Singular string
	Kind     string
	// Namespaced is the resource's scope.
	Namespaced bool
	ShortNames []string
	Categories []string

	New     func() runtime.Object
	NewList func() runtime.Object

	// NameGenerator makes a new object's name from its generateName (nil:
	// SimpleNameGenerator, a random suffix).
	NameGenerator func(base string) string
	// Strategy specialises create, update and delete (nil: BaseStrategy).
	Strategy Strategy
	// StatusStrategy, when set, serves "<name>/status" with it.
	StatusStrategy rest.RESTUpdateStrategy
	// Scale, when set, serves "<name>/scale" (autoscaling/v1 Scale);
	// WorkloadScale builds it for kinds shaped like kube's workloads.
	Scale *ScaleAccessor
	// Hooks run around the resource's writes (see Hooks).
	Hooks Hooks
	// Serve, when set, wraps the built Store into what is served at Name
	// (kube's storages that refine a Store: a namespace's two-step
	// delete, RBAC's guard against privilege escalation). It runs once, at
	// Install; what it returns must destroy the Store with its Destroy
	// (embedding the Store does). Status, scale and Subresources are
	// still built over the Store itself. A resource served at other
	// Versions cannot have one: those would bypass it.
	Serve func(store *Store) rest.Storage
	// Subresources are further storages over the resource's Store, each
	// built from it, by path in the group version: "pods/binding",
	// "serviceaccounts/token", the connect subresources ("pods/log",
	// "nodes/proxy"). A path without a slash serves a resource of its own
	// that writes this one's objects (kube's "bindings", which bind pods).
	// A SubresourceFunc that fails fails the build.
	Subresources map[string]SubresourceFunc
	// Destroy, when set, releases what the declaration holds besides the
	// Store (the stores of a service's allocators): it runs once, when
	// the Store is destroyed or when building it fails.
	Destroy func()

	// AttrFunc adds selectable fields beyond metadata.name/namespace.
	AttrFunc storage.AttrFunc
	// FieldLabelConversion, when set, decides which fields a field
	// selector may name (and renames aliases), with kube's messages; see
	// SupportedFieldLabels. Unset, the Store's selectable fields decide
	// (metadata.name, metadata.namespace and AttrFunc's), with the words
	// of kube's default conversion when those are metadata's alone.
	FieldLabelConversion FieldLabelConversionFunc
	// IndexFields are selectable fields the watch cache indexes.
	IndexFields []string
	// Table prints the resource for kubectl (nil: NAME and CREATED AT).
	Table rest.TableConvertor
	// ReturnDeletedObject: delete returns the object, not a Status.
	ReturnDeletedObject bool
	// Structure, when set, describes the kind for server-side apply
	// where its Go type does not (custom resources).
	Structure *rest.Structure
	// Normalize, when set, rewrites what is read from storage into the
	// form the resource serves (storage.Config.Normalize: custom
	// resources stored under an older schema or version).
	Normalize func(data []byte) ([]byte, error)
	// TTLFunc gives objects a time to live (events).
	TTLFunc func(obj runtime.Object, existing uint64, update bool) (uint64, error)
	// Versions are the other versions of the group the resource is served
	// at, each a view of its one Store converting to and from the version
	// it is built at (autoscaling/v1 horizontalpodautoscalers over
	// autoscaling/v2), with its status when the resource has one.
	// BuildGroup serves them after that version, in order.
	Versions []Version
}

// SubresourceFunc builds a storage served over a resource's Store (see
// Resource.Subresources). What it returns must not destroy the Store: the
// resource does.
type SubresourceFunc func(main *Store) (rest.Storage, error)

// Build returns the Store of r in group version gv, from getter's options.
// On failure it has released what r holds (r.Destroy).
func (r Resource) Build(gv schema.GroupVersion, getter RESTOptionsGetter) (*Store, error) {
	store, err := r.build(gv, getter)
	if err != nil {
		if r.Destroy != nil {
			r.Destroy()
		}
		return nil, err
	}
	if r.Destroy != nil {
		destroyStorage := store.destroyFunc
		store.destroyFunc = func() {
			destroyStorage()
			r.Destroy()
		}
	}
	return store, nil
}

func (r Resource) build(gv schema.GroupVersion, getter RESTOptionsGetter) (*Store, error) {
	strategy := r.Strategy
	if strategy == nil {
		strategy = BaseStrategy{Namespaced: r.Namespaced}
	}
	if r.Name == "" {
		return nil, fmt.Errorf("resource of kind %s: no name", r.Kind)
	}
	if strategy.NamespaceScoped() != r.Namespaced {
		return nil, fmt.Errorf("resource %s: strategy scope does not match the declared scope", r.Name)
	}
	if r.StatusStrategy != nil && r.StatusStrategy.NamespaceScoped() != r.Namespaced {
		return nil, fmt.Errorf("resource %s: status strategy scope does not match the declared scope", r.Name)
	}
	if r.Serve != nil && len(r.Versions) > 0 {
		return nil, fmt.Errorf("resource %s: a Serve wrapper and other versions are declared together", r.Name)
	}
	for path := range r.Subresources {
		if sub, ok := strings.CutPrefix(path, r.Name+"/"); ok && sub != "" && !strings.Contains(sub, "/") {
			continue
		}
		if path == "" || path == r.Name || strings.Contains(path, "/") {
			return nil, fmt.Errorf("resource %s: subresource path %q is neither %s/<name> nor a resource name", r.Name, path, r.Name)
		}
	}
	return newStore(r, gv, strategy, getter)
}

// Install builds r and adds it, with its status, scale and declared
// subresources, to resources (one version's part of
// APIGroupInfo.VersionedResourcesStorageMap). It returns the Store, for
// the typed handles a provider gives its callers.
func (r Resource) Install(gv schema.GroupVersion, getter RESTOptionsGetter, resources map[string]rest.Storage) (*Store, error) {
	store, err := r.Build(gv, getter)
	if err != nil {
		return nil, err
	}
	main := rest.Storage(store)
	if r.Serve != nil {
		main = r.Serve(store)
	}
	served := map[string]rest.Storage{r.Name: main}
	if r.StatusStrategy != nil {
		served[r.Name+"/status"] = NewStatusREST(store, r.StatusStrategy)
	}
	if r.Scale != nil {
		served[r.Name+"/scale"] = NewScaleREST(store, *r.Scale)
	}
	for path, build := range r.Subresources {
		if _, dup := served[path]; dup {
			store.Destroy()
			return nil, fmt.Errorf("resource %s: %s is declared twice", r.Name, path)
		}
		sub, err := build(store)
		if err != nil {
			store.Destroy()
			return nil, fmt.Errorf("resource %s: %s: %w", r.Name, path, err)
		}
		served[path] = sub
	}
	for path := range served {
		if _, dup := resources[path]; dup {
			store.Destroy()
			return nil, fmt.Errorf("resource %s: %s is served already", r.Name, path)
		}
	}
	for path, s := range served {
		resources[path] = s
	}
	return store, nil
}

// BuildGroup builds the APIGroupInfo of a group from its resources'
// declarations: stored and served at gv, the preferred version, and served
// at their other Versions too, in the order they come.
func BuildGroup(gv schema.GroupVersion, getter RESTOptionsGetter, resources ...Resource) (rest.APIGroupInfo, error) {
	info, _, err := BuildGroupStores(gv, getter, resources...)
	return info, err
}

// BuildGroupStores is BuildGroup, and returns the Store of each of
// resources beside, in their order: a provider hands the server's wiring
// those it uses as typed handles.
func BuildGroupStores(gv schema.GroupVersion, getter RESTOptionsGetter, resources ...Resource) (rest.APIGroupInfo, []*Store, error) {
	info := NewGroupInfo(gv)
	fail := func(err error) (rest.APIGroupInfo, []*Store, error) {
		info.Destroy()
		return rest.APIGroupInfo{}, nil, err
	}
	stores := make([]*Store, len(resources))
	for i, r := range resources {
		store, err := r.Install(gv, getter, info.VersionedResourcesStorageMap[gv.Version])
		if err != nil {
			return fail(err)
		}
		stores[i] = store
		var status *StatusREST
		if r.StatusStrategy != nil {
			status = NewStatusREST(store, r.StatusStrategy)
		}
		for _, v := range r.Versions {
			if v.Kind.Group != gv.Group {
				return fail(fmt.Errorf("resource %s: version %v is not in group %q", r.Name, v.Kind, gv.Group))
			}
			storages, ok := info.VersionedResourcesStorageMap[v.Kind.Version]
			if !ok {
				storages = map[string]rest.Storage{}
				info.VersionedResourcesStorageMap[v.Kind.Version] = storages
				info.PrioritizedVersions = append(info.PrioritizedVersions, v.Kind.Version)
			}
			if err := InstallVersion(storages, r.Name, store, status, v); err != nil {
				return fail(err)
			}
		}
	}
	return info, stores, nil
}

// NewGroupInfo returns the empty APIGroupInfo of a group served in one
// version, gv, for providers that install their resources one by one.
func NewGroupInfo(gv schema.GroupVersion) rest.APIGroupInfo {
	return rest.APIGroupInfo{
		GroupName:                    gv.Group,
		PrioritizedVersions:          []string{gv.Version},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{gv.Version: {}},
	}
}
