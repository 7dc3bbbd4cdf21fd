package generic

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Version declares a resource served at a version (or in a group) other
// than the one its Store keeps: autoscaling/v1 horizontalpodautoscalers
// over the autoscaling/v2 Store, events.k8s.io/v1 events over the core v1
// Store. The served version is a view of the resource's one Store (one
// etcd prefix, one watch cache), converting at its boundary.
type Version struct {
	// Kind is the kind served (autoscaling/v1 HorizontalPodAutoscaler).
	Kind    schema.GroupVersionKind
	New     func() runtime.Object
	NewList func() runtime.Object
	// Converter converts between Kind and the Store's kind
	// (conversion.Builtin() for the built-in kinds).
	Converter conversion.Converter
	// Defaults, when set, are Kind's own defaults (autoscaling/v1's
	// minReplicas), applied to what clients send at this version.
	Defaults func(obj runtime.Object)
	// Strategy, when set, replaces the Store's strategy for writes at
	// this version, on storage-version objects (events.k8s.io/v1
	// validates more than core v1). The scope must be the Store's.
	Strategy Strategy
	// FieldLabelConversion, when set, decides which fields a field
	// selector may name at this version and maps them to the Store's
	// (events.k8s.io/v1 regarding.kind is core's involvedObject.kind);
	// nil selects with the Store's own rules.
	FieldLabelConversion FieldLabelConversionFunc
	// Table prints objects of Kind; nil prints them as the Store does,
	// converted to its kind (kube prints every version of a resource from
	// its internal type: the same columns).
	Table rest.TableConvertor
}

// VersionedStore serves a Store at another Version: every verb the Store
// has, with request objects converted to the storage version on the way
// in and results (objects, lists, watch events) converted to the served
// version on the way out. Handlers see a storage whose New is the served
// version's type, as for any other resource.
//
// Updates run the request's UpdatedObjectInfo (a PUT's body and
// transformers, a patch, an apply) entirely at the served version: the
// current object is converted to it first and the result back. Admission
// sees the served version too.
type VersionedStore struct {
	// store is a view of the resource's Store: the same storage, the
	// served group's resource name in errors, and the version's strategy.
	store *Store
	versioner
	// memoKey names the conversion of a watch event in its memo.
	memoKey string
}

var (
	_ rest.Getter                     = (*VersionedStore)(nil)
	_ rest.ObjectGetter               = (*VersionedStore)(nil)
	_ rest.Lister                     = (*VersionedStore)(nil)
	_ rest.Watcher                    = (*VersionedStore)(nil)
	_ rest.Creater                    = (*VersionedStore)(nil)
	_ rest.Updater                    = (*VersionedStore)(nil)
	_ rest.GracefulDeleter            = (*VersionedStore)(nil)
	_ rest.CollectionDeleter          = (*VersionedStore)(nil)
	_ rest.MayReturnFullObjectDeleter = (*VersionedStore)(nil)
	_ rest.TableConvertor             = (*VersionedStore)(nil)
	_ rest.Defaulter                  = (*VersionedStore)(nil)
	_ rest.ResetFieldsStrategy        = (*VersionedStore)(nil)
	_ rest.StorageVersionProvider     = (*VersionedStore)(nil)
	_ rest.StoredMetadataReader       = (*VersionedStore)(nil)
	_ rest.UnknownFieldPruner         = (*VersionedStore)(nil)
)

// NewVersionedStore returns store served at v.
func NewVersionedStore(store *Store, v Version) (*VersionedStore, error) {
	if err := v.check(store); err != nil {
		return nil, err
	}
	view := store.servedAs(v.Kind.Group, v.Strategy)
	return &VersionedStore{store: view, versioner: versioner{version: v, storageKind: store.kind}, memoKey: v.Kind.String()}, nil
}

// check refuses a Version that cannot serve store.
func (v Version) check(store *Store) error {
	if v.Kind.Empty() || v.New == nil || v.NewList == nil || v.Converter == nil {
		return fmt.Errorf("version %v of %s: kind, New, NewList and Converter are required", v.Kind, store.qualifiedResource)
	}
	if v.Strategy != nil && v.Strategy.NamespaceScoped() != store.NamespaceScoped() {
		return fmt.Errorf("version %v of %s: strategy scope does not match the store's", v.Kind, store.qualifiedResource)
	}
	return nil
}

// servedAs returns a view of e for a version served in group: the same
// storage (never destroyed by the view) and hooks, named after that group
// in errors (kube names the kind of an invalid object after the stored
// one, its internal type, in every group, and so does the view), writing
// with strategy when it is not nil.
func (e *Store) servedAs(group string, strategy Strategy) *Store {
	view := *e
	view.qualifiedResource.Group = group
	view.singularResource.Group = group
	view.destroyFunc = func() {}
	if strategy != nil {
		view.createStrategy = strategy
		view.mainUpdate.strategy = strategy
	}
	return &view
}

// New implements rest.Storage: an object of the served kind.
func (s *VersionedStore) New() runtime.Object { return s.version.New() }

// NewList implements rest.Lister.
func (s *VersionedStore) NewList() runtime.Object { return s.version.NewList() }

// Destroy implements rest.Storage: the storage is the Store's, which its
// own resource destroys.
func (s *VersionedStore) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (s *VersionedStore) NamespaceScoped() bool { return s.store.NamespaceScoped() }

// ShortNames implements rest.ShortNamesProvider.
func (s *VersionedStore) ShortNames() []string { return s.store.ShortNames() }

// Categories implements rest.CategoriesProvider.
func (s *VersionedStore) Categories() []string { return s.store.Categories() }

// GetSingularName implements rest.SingularNameProvider.
func (s *VersionedStore) GetSingularName() string { return s.store.GetSingularName() }

// DeleteReturnsDeletedObject implements rest.MayReturnFullObjectDeleter.
func (s *VersionedStore) DeleteReturnsDeletedObject() bool {
	return s.store.DeleteReturnsDeletedObject()
}

// StorageReadiness reports whether the Store can serve.
func (s *VersionedStore) StorageReadiness() error { return s.store.StorageReadiness() }

// PruneUnknownFields implements rest.UnknownFieldPruner: the view's
// strategy prunes an object of the served version by that version's
// schema.
func (s *VersionedStore) PruneUnknownFields(obj runtime.Object) ([]string, error) {
	return s.store.PruneUnknownFields(obj)
}

// Structure implements rest.StructureProvider.
func (s *VersionedStore) Structure() *rest.Structure { return s.store.Structure() }

// StorageVersion implements rest.StorageVersionProvider.
func (s *VersionedStore) StorageVersion() schema.GroupVersionKind { return s.storageKind }

// GetResetFields implements rest.ResetFieldsStrategy: the Store's
// strategy names the fields it resets at every version it is served at.
func (s *VersionedStore) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor on served objects (one,
// or a list): with the version's Table, or the Store's on the objects
// converted to its kind. Rows keep the served objects.
func (s *VersionedStore) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	if s.version.Table != nil {
		return s.version.Table.ConvertToTable(ctx, obj, tableOptions)
	}
	served := []runtime.Object{obj}
	if meta.IsListType(obj) {
		var err error
		if served, err = meta.ExtractList(obj); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	stored := make([]runtime.Object, len(served))
	for i, o := range served {
		var err error
		if stored[i], err = s.toStorage(o.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	var toPrint runtime.Object = stored[0]
	if meta.IsListType(obj) {
		list := s.store.NewList()
		if err := meta.SetList(list, stored); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		copyListMeta(list, obj)
		toPrint = list
	}
	table, err := s.store.ConvertToTable(ctx, toPrint, tableOptions)
	if err != nil {
		return nil, err
	}
	if len(table.Rows) == len(served) {
		for i := range table.Rows {
			table.Rows[i].Object.Object = served[i]
		}
	}
	return table, nil
}

// Get implements rest.Getter.
func (s *VersionedStore) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := s.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return s.toServed(obj)
}

// Create implements rest.Creater.
func (s *VersionedStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return s.CreateMutating(ctx, obj, nil, createValidation, options)
}

// CreateMutating implements rest.MutatingCreater: the object is
// admitted at the served version.
func (s *VersionedStore) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	stored, err := s.toStorage(obj)
	if err != nil {
		return nil, err
	}
	out, err := s.store.CreateMutating(ctx, stored, s.mutation(mutate), s.validation(createValidation), options)
	if err != nil {
		return nil, err
	}
	return s.toServed(out)
}

// Update implements rest.Updater.
func (s *VersionedStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := s.store.Update(ctx, name, s.objectInfo(objInfo), s.validation(createValidation),
		s.updateValidation(updateValidation), forceAllowCreate, options)
	if err != nil {
		return nil, false, err
	}
	served, err := s.toServed(out)
	return served, created, err
}

// Delete implements rest.GracefulDeleter.
func (s *VersionedStore) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	out, immediately, err := s.store.Delete(ctx, name, s.validation(deleteValidation), options)
	if err != nil {
		return nil, false, err
	}
	if _, isStatus := out.(*metav1.Status); isStatus || out == nil {
		return out, immediately, nil
	}
	served, err := s.toServed(out)
	return served, immediately, err
}

// HostsMutation implements rest.MutationHost: the object is admitted at
// the served version (mutation in version_convert.go).
func (s *VersionedStore) HostsMutation() bool { return true }
