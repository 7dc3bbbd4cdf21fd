package generic

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Resource declares one served resource. A RESTStorageProvider lists its
// resources as Resource values; Build turns each into a Store plus its
// status subresource. Adding a resource is a declaration and, where the
// resource needs one, a small strategy.
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

	// Strategy specialises create and update (nil: BaseStrategy).
	Strategy Strategy
	// StatusStrategy, when set, serves "<name>/status" with it.
	StatusStrategy rest.RESTUpdateStrategy
	// Scale, when set, serves "<name>/scale" (autoscaling/v1 Scale).
	Scale *ScaleAccessor
	// AttrFunc adds selectable fields beyond metadata.name/namespace.
	AttrFunc storage.AttrFunc
	// FieldLabelConversion, when set, decides which fields a field
	// selector may name (and renames aliases), with kube's messages; see
	// DefaultFieldLabelConversion and SupportedFieldLabels.
	FieldLabelConversion FieldLabelConversionFunc
	// IndexFields are selectable fields the watch cache indexes.
	IndexFields []string
	// Table prints the resource for kubectl (nil: NAME and AGE).
	Table rest.TableConvertor
	// ReturnDeletedObject: delete returns the object, not a Status.
	ReturnDeletedObject bool
	// TTLFunc gives objects a time to live (events).
	TTLFunc func(obj runtime.Object, existing uint64, update bool) (uint64, error)
}

// Build returns the Store of r in group version gv, from getter's options.
func (r Resource) Build(gv schema.GroupVersion, getter RESTOptionsGetter) (*Store, error) {
	strategy := r.Strategy
	if strategy == nil {
		strategy = BaseStrategy{Namespaced: r.Namespaced}
	}
	if strategy.NamespaceScoped() != r.Namespaced {
		return nil, fmt.Errorf("resource %s: strategy scope does not match the declared scope", r.Name)
	}
	if r.StatusStrategy != nil && r.StatusStrategy.NamespaceScoped() != r.Namespaced {
		return nil, fmt.Errorf("resource %s: status strategy scope does not match the declared scope", r.Name)
	}
	gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
	store := &Store{
		NewFunc:                   r.New,
		NewListFunc:               r.NewList,
		Kind:                      gv.WithKind(r.Kind),
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: schema.GroupResource{Group: gv.Group, Resource: r.Singular},
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ReturnDeletedObject:       r.ReturnDeletedObject,
		TableConvertor:            r.Table,
		ShortNamesList:            r.ShortNames,
		CategoriesList:            r.Categories,
		TTLFunc:                   r.TTLFunc,
		FieldLabelConversionFunc:  r.FieldLabelConversion,
	}
	attrs := r.AttrFunc
	if attrs == nil {
		attrs = DefaultAttrFunc(r.Namespaced)
	}
	if err := store.CompleteWithOptions(&StoreOptions{RESTOptions: getter, AttrFunc: attrs, IndexFields: r.IndexFields}); err != nil {
		return nil, err
	}
	return store, nil
}

// Install builds r and adds it, with its status and scale subresources,
// to resources (one version's part of
// APIGroupInfo.VersionedResourcesStorageMap). It returns the main Store,
// for subresources the group adds itself.
func (r Resource) Install(gv schema.GroupVersion, getter RESTOptionsGetter, resources map[string]rest.Storage) (*Store, error) {
	store, err := r.Build(gv, getter)
	if err != nil {
		return nil, err
	}
	resources[r.Name] = store
	if r.StatusStrategy != nil {
		resources[r.Name+"/status"] = NewStatusREST(store, r.StatusStrategy)
	}
	if r.Scale != nil {
		resources[r.Name+"/scale"] = NewScaleREST(store, *r.Scale)
	}
	return store, nil
}

// BuildGroup builds the APIGroupInfo of a group served in one version,
// from its resources' declarations.
func BuildGroup(gv schema.GroupVersion, getter RESTOptionsGetter, resources ...Resource) (rest.APIGroupInfo, error) {
	storages := map[string]rest.Storage{}
	info := rest.APIGroupInfo{
		GroupName:                    gv.Group,
		PrioritizedVersions:          []string{gv.Version},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{gv.Version: storages},
	}
	for _, r := range resources {
		if _, err := r.Install(gv, getter, storages); err != nil {
			info.Destroy()
			return rest.APIGroupInfo{}, err
		}
	}
	return info, nil
}
