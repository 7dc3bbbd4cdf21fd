// Package rest defines the verbs a resource's storage offers to the HTTP
// layer (Getter, Lister, Creater, ...), the strategies that specialise the
// generic Store per resource, and the APIGroupInfo that RESTStorageProviders
// fill. The HTTP layer finds the verbs of a storage by type assertion.
package rest

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Storage is the minimum a served resource (or subresource) implements.
type Storage interface {
	// New returns an empty object of the kind the resource serves.
	New() runtime.Object
	// Destroy releases what the storage started (its cache, watches).
	Destroy()
}

// Scoper says whether a resource lives in namespaces.
type Scoper interface {
	NamespaceScoped() bool
}

// GroupVersionKindProvider names the kind a storage serves, where it is not
// the kind of the resource's group version (the scale subresource serves
// autoscaling/v1 Scale).
type GroupVersionKindProvider interface {
	GroupVersionKind(containingGV schema.GroupVersion) schema.GroupVersionKind
}

// GroupVersionAcceptor is implemented by storages that accept request
// bodies of other group versions than the kind they serve (pods/eviction
// takes policy/v1beta1 Evictions too): the HTTP layer converts those,
// through the Scheme, into the storage's New object.
type GroupVersionAcceptor interface {
	AcceptsGroupVersion(gv schema.GroupVersion) bool
}

// StorageVersionProvider is implemented by storages that serve a kind
// stored as another (a version of a resource other than its storage
// version): discovery's storageVersionHash names the stored kind, so that
// clients see both versions share one storage.
type StorageVersionProvider interface {
	StorageVersion() schema.GroupVersionKind
}

// StoredGroupKind is the group kind storage keeps the objects of kind as:
// its storage version's, or kind's own. Two resources kept as one group
// kind, under one resource name, are one stored resource served twice
// (its versions, or core and events.k8s.io events), which admission's
// matchPolicy Equivalent counts as equivalent, as kube's registry of
// equivalent resources does from their storage prefix.
func StoredGroupKind(storage Storage, kind schema.GroupVersionKind) schema.GroupKind {
	if p, ok := storage.(StorageVersionProvider); ok {
		return p.StorageVersion().GroupKind()
	}
	return kind.GroupKind()
}

// StoredMetadataReader is implemented by storages that serve objects at
// another version than they store them: the metadata of a served object's
// stored form. Metadata views (PartialObjectMetadata, Table rows) show it,
// as kube's show its internal objects', which carry none of the
// annotations a version adds to round-trip what it cannot say.
type StoredMetadataReader interface {
	StoredMetadata(obj runtime.Object) (metav1.Object, error)
}

// ShortNamesProvider gives the short names discovery lists ("cm").
type ShortNamesProvider interface {
	ShortNames() []string
}

// CategoriesProvider gives the categories discovery lists ("all").
type CategoriesProvider interface {
	Categories() []string
}

// SingularNameProvider gives the singular name discovery lists.
type SingularNameProvider interface {
	GetSingularName() string
}

// StorageReadinessChecker is implemented by storages that are not ready
// at once (a watch cache before its first list); /readyz asks them.
type StorageReadinessChecker interface {
	StorageReadiness() error
}

// Getter reads one object.
type Getter interface {
	Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error)
}

// ObjectGetter reads one object as stored (its encoded form), for callers
// that only write it out: the HTTP layer answers a JSON GET with the bytes
// as they are. Same semantics and errors as Getter.
type ObjectGetter interface {
	GetObject(ctx context.Context, name string, options *metav1.GetOptions) (*storage.Object, error)
}

// Lister lists objects. The items come encoded, as storage holds them: the
// HTTP layer streams them without decoding.
type Lister interface {
	NewList() runtime.Object
	List(ctx context.Context, options *metainternalversion.ListOptions) (*storage.ListResult, error)
}

// Watcher watches objects. Its ERROR events carry storage errors, which
// the caller converts (generic.InterpretWatchError) when it reports them.
type Watcher interface {
	Watch(ctx context.Context, options *metainternalversion.ListOptions) (storage.Watcher, error)
}

// Creater creates objects.
type Creater interface {
	New() runtime.Object
	Create(ctx context.Context, obj runtime.Object, createValidation ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error)
}

// Updater replaces objects (PUT, and PATCH through UpdatedObjectInfo).
// created reports that the update created the object.
type Updater interface {
	New() runtime.Object
	Update(ctx context.Context, name string, objInfo UpdatedObjectInfo, createValidation ValidateObjectFunc,
		updateValidation ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (obj runtime.Object, created bool, err error)
}

// GracefulDeleter deletes objects. deletedImmediately is false when the
// object stays (finalizers, a grace period) and obj is its new state.
type GracefulDeleter interface {
	Delete(ctx context.Context, name string, deleteValidation ValidateObjectFunc, options *metav1.DeleteOptions) (obj runtime.Object, deletedImmediately bool, err error)
}

// MayReturnFullObjectDeleter is implemented by deleters that say whether
// a delete returns the deleted object (pods, services) or a Status.
type MayReturnFullObjectDeleter interface {
	DeleteReturnsDeletedObject() bool
}

// CollectionDeleter deletes every object a list selects.
type CollectionDeleter interface {
	DeleteCollection(ctx context.Context, deleteValidation ValidateObjectFunc, options *metav1.DeleteOptions,
		listOptions *metainternalversion.ListOptions) (runtime.Object, error)
}

// TableConvertor renders objects as a meta.k8s.io Table for kubectl.
type TableConvertor interface {
	ConvertToTable(ctx context.Context, object runtime.Object, tableOptions runtime.Object) (*metav1.Table, error)
}

// ValidateObjectFunc is an extra check (admission) run on an object about
// to be created or deleted.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// ValidateObjectUpdateFunc is an extra check run on an update.
type ValidateObjectUpdateFunc func(ctx context.Context, obj, old runtime.Object) error

// UpdatedObjectInfo computes the new state of an object from its current
// state: a PUT returns its body, a PATCH applies itself to old.
type UpdatedObjectInfo interface {
	// Preconditions the update must meet (UID, resourceVersion), or nil.
	Preconditions() *metav1.Preconditions
	// UpdatedObject returns the new object given the current one (a zero
	// object when it does not exist).
	UpdatedObject(ctx context.Context, oldObj runtime.Object) (newObj runtime.Object, err error)
}

// DefaultUpdatedObjectInfo is the UpdatedObjectInfo of a PUT: its body,
// after transformers.
type DefaultUpdatedObjectInfo struct {
	Obj          runtime.Object
	Transformers []TransformFunc
}

// TransformFunc changes an updated object given the old one.
type TransformFunc func(ctx context.Context, newObj, oldObj runtime.Object) (runtime.Object, error)

// Preconditions implements UpdatedObjectInfo: the UID of a PUT's body,
// when it has one, is a precondition, as in kube (its resourceVersion is
// checked by the Store).
func (i *DefaultUpdatedObjectInfo) Preconditions() *metav1.Preconditions {
	m, err := meta.Accessor(i.Obj)
	if err != nil || m.GetUID() == "" {
		return nil
	}
	uid := m.GetUID()
	return &metav1.Preconditions{UID: &uid}
}

// UpdatedObject implements UpdatedObjectInfo.
func (i *DefaultUpdatedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj := i.Obj.DeepCopyObject()
	var err error
	for _, t := range i.Transformers {
		if obj, err = t(ctx, obj, oldObj); err != nil {
			return nil, err
		}
	}
	return obj, nil
}
