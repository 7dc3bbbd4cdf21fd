package generic

import (
	"context"
	"fmt"
	"path"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Store serves one resource from a storage.Interface: the generic
// implementation of every verb, specialised by strategies. Set the fields,
// then call CompleteWithOptions.
type Store struct {
	// NewFunc returns an empty object of the resource's kind.
	NewFunc func() runtime.Object
	// NewListFunc returns an empty list of the resource's kind.
	NewListFunc func() runtime.Object
	// Kind is the kind served; objects are stored with it as TypeMeta.
	Kind schema.GroupVersionKind
	// DefaultQualifiedResource names the resource in errors ("pods").
	DefaultQualifiedResource schema.GroupResource
	// SingularQualifiedResource is its singular name ("pod").
	SingularQualifiedResource schema.GroupResource

	// KeyRootFunc returns the key prefix of a list in ctx's namespace;
	// KeyFunc the key of a named object. Defaults come from the resource
	// prefix and scope.
	KeyRootFunc func(ctx context.Context) string
	KeyFunc     func(ctx context.Context, name string) (string, error)

	// TTLFunc returns the time to live of an object in seconds (events);
	// existing is the current TTL on update.
	TTLFunc func(obj runtime.Object, existing uint64, update bool) (uint64, error)

	// BeginCreate, BeginUpdate and AfterDelete let a resource reserve and
	// release what its objects hold outside their own key (a service's
	// cluster IP and node ports). nil: nothing to do.
	BeginCreate BeginCreateFunc
	BeginUpdate BeginUpdateFunc
	AfterDelete AfterDeleteFunc

	CreateStrategy rest.RESTCreateStrategy
	UpdateStrategy rest.RESTUpdateStrategy
	// DeleteStrategy may implement rest.RESTGracefulDeleteStrategy and
	// rest.GarbageCollectionDeleteStrategy.
	DeleteStrategy rest.Scoper

	// ReturnDeletedObject makes Delete return the deleted object instead
	// of a Status.
	ReturnDeletedObject bool

	TableConvertor rest.TableConvertor

	// FieldLabelConversionFunc, when set, checks and converts the fields
	// of field selectors (kube's per-kind conversion); without it a field
	// selector may name the fields AttrFunc returns.
	FieldLabelConversionFunc FieldLabelConversionFunc

	ShortNamesList []string
	CategoriesList []string

	// Storage is the resource's store, built by CompleteWithOptions from
	// RESTOptions.Decorator.
	Storage storage.Interface
	// DestroyFunc releases Storage.
	DestroyFunc func()

	attrFunc         storage.AttrFunc
	selectableFields map[string]bool
}

// StoreOptions complete a Store.
type StoreOptions struct {
	RESTOptions RESTOptionsGetter
	// AttrFunc returns labels and selectable fields; the default has the
	// labels, metadata.name and (namespaced) metadata.namespace.
	AttrFunc storage.AttrFunc
	// IndexFields are the selectable fields the watch cache indexes.
	IndexFields []string
}

var (
	_ rest.Getter            = (*Store)(nil)
	_ rest.Lister            = (*Store)(nil)
	_ rest.Watcher           = (*Store)(nil)
	_ rest.Creater           = (*Store)(nil)
	_ rest.Updater           = (*Store)(nil)
	_ rest.GracefulDeleter   = (*Store)(nil)
	_ rest.CollectionDeleter = (*Store)(nil)
	_ rest.TableConvertor    = (*Store)(nil)
)

// CompleteWithOptions fills the defaults and builds the store's storage.
func (e *Store) CompleteWithOptions(options *StoreOptions) error {
	if e.DefaultQualifiedResource.Empty() {
		return fmt.Errorf("store %#v must have a non-empty qualified resource", e)
	}
	if e.NewFunc == nil || e.NewListFunc == nil {
		return fmt.Errorf("store for %s must have NewFunc and NewListFunc", e.DefaultQualifiedResource)
	}
	if e.CreateStrategy == nil || e.UpdateStrategy == nil || e.DeleteStrategy == nil {
		return fmt.Errorf("store for %s must have create, update and delete strategies", e.DefaultQualifiedResource)
	}
	if options.RESTOptions == nil {
		return fmt.Errorf("options for %s must have RESTOptions set", e.DefaultQualifiedResource)
	}
	opts, err := options.RESTOptions.GetRESTOptions(e.DefaultQualifiedResource)
	if err != nil {
		return err
	}
	namespaced := e.CreateStrategy.NamespaceScoped()
	prefix := opts.ResourcePrefix
	if e.KeyRootFunc == nil {
		e.KeyRootFunc = func(ctx context.Context) string {
			if ns := request.NamespaceValue(ctx); namespaced && ns != "" {
				return prefix + "/" + ns
			}
			return prefix
		}
	}
	if e.KeyFunc == nil {
		e.KeyFunc = func(ctx context.Context, name string) (string, error) {
			return objectKey(ctx, prefix, name, namespaced)
		}
	}
	e.attrFunc = options.AttrFunc
	if e.attrFunc == nil {
		e.attrFunc = DefaultAttrFunc(namespaced)
	}
	if err := e.recordSelectableFields(); err != nil {
		return err
	}
	if e.TableConvertor == nil {
		e.TableConvertor = DefaultTableConvertor(e.DefaultQualifiedResource)
	}
	if e.SingularQualifiedResource.Empty() {
		e.SingularQualifiedResource = e.DefaultQualifiedResource
	}
	if e.Storage == nil {
		cfg := storage.Config{
			Resource:       e.DefaultQualifiedResource.String(),
			ResourcePrefix: prefix,
			NewFunc:        e.NewFunc,
			AttrFunc:       e.attrFunc,
			IndexFields:    options.IndexFields,
			KeyFunc: func(obj runtime.Object) (string, error) {
				m, err := meta.Accessor(obj)
				if err != nil {
					return "", err
				}
				if namespaced {
					return prefix + "/" + m.GetNamespace() + "/" + m.GetName(), nil
				}
				return prefix + "/" + m.GetName(), nil
			},
			Paging: true,
		}
		s, destroy, err := opts.Decorator(opts.StorageFactory, cfg)
		if err != nil {
			return fmt.Errorf("building the store of %s: %w", e.DefaultQualifiedResource, err)
		}
		e.Storage = s // before the counter reads it
		stopCounting := e.startObservingCount(prefix, opts.CountMetricPollPeriod)
		e.DestroyFunc = func() {
			stopCounting()
			destroy()
		}
	}
	return nil
}

// recordSelectableFields remembers which fields a field selector may name:
// those AttrFunc returns.
func (e *Store) recordSelectableFields() error {
	_, f, err := e.attrFunc(e.NewFunc())
	if err != nil {
		return fmt.Errorf("attributes of %s: %w", e.DefaultQualifiedResource, err)
	}
	e.selectableFields = map[string]bool{}
	for k := range f {
		e.selectableFields[k] = true
	}
	return nil
}

// SelectableFields returns the fields a field selector may name, sorted.
func (e *Store) SelectableFields() []string {
	var out []string
	for k := range e.selectableFields {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DefaultAttrFunc returns the labels, metadata.name and metadata.namespace
// of an object: the fields kube's default field label conversion accepts,
// for cluster-scoped kinds too (whose namespace is always empty).
func DefaultAttrFunc(namespaced bool) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil, err
		}
		return labels.Set(m.GetLabels()), DefaultFieldsSet(m, namespaced), nil
	}
}

// DefaultFieldsSet is the field set of DefaultAttrFunc.
func DefaultFieldsSet(m metav1.Object, namespaced bool) fields.Set {
	set := ObjectMetaFieldsSet(m, namespaced)
	if !namespaced {
		set["metadata.namespace"] = ""
	}
	return set
}

// ObjectMetaFieldsSet returns the selectable fields every object has.
func ObjectMetaFieldsSet(m metav1.Object, namespaced bool) fields.Set {
	if !namespaced {
		return fields.Set{"metadata.name": m.GetName()}
	}
	return fields.Set{"metadata.name": m.GetName(), "metadata.namespace": m.GetNamespace()}
}

func objectKey(ctx context.Context, prefix, name string, namespaced bool) (string, error) {
	if msgs := apivalidation.IsValidPathSegmentName(name); len(msgs) != 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("Name parameter invalid: %q: %s", name, msgs[0]))
	}
	if !namespaced {
		return path.Join(prefix, name), nil
	}
	ns := request.NamespaceValue(ctx)
	if ns == "" {
		return "", apierrors.NewBadRequest("Namespace parameter required.")
	}
	if msgs := apivalidation.IsValidPathSegmentName(ns); len(msgs) != 0 {
		return "", apierrors.NewBadRequest(fmt.Sprintf("Namespace parameter invalid: %q: %s", ns, msgs[0]))
	}
	return prefix + "/" + ns + "/" + name, nil
}

// New implements rest.Storage.
func (e *Store) New() runtime.Object { return e.NewFunc() }

// NewList implements rest.Lister.
func (e *Store) NewList() runtime.Object { return e.NewListFunc() }

// Destroy implements rest.Storage.
func (e *Store) Destroy() {
	if e.DestroyFunc != nil {
		e.DestroyFunc()
	}
}

// DeleteReturnsDeletedObject implements rest.MayReturnFullObjectDeleter.
func (e *Store) DeleteReturnsDeletedObject() bool { return e.ReturnDeletedObject }

// NamespaceScoped implements rest.Scoper.
func (e *Store) NamespaceScoped() bool { return e.CreateStrategy.NamespaceScoped() }

// ShortNames implements rest.ShortNamesProvider.
func (e *Store) ShortNames() []string { return e.ShortNamesList }

// Categories implements rest.CategoriesProvider.
func (e *Store) Categories() []string { return e.CategoriesList }

// GetSingularName implements rest.SingularNameProvider.
func (e *Store) GetSingularName() string { return e.SingularQualifiedResource.Resource }

// ConvertToTable implements rest.TableConvertor.
func (e *Store) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return e.TableConvertor.ConvertToTable(ctx, obj, tableOptions)
}

// Get implements rest.Getter.
func (e *Store) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	out := e.NewFunc()
	if err := e.Storage.Get(ctx, key, storage.GetOptions{ResourceVersion: options.ResourceVersion}, out); err != nil {
		return nil, interpretGetError(err, e.DefaultQualifiedResource, name)
	}
	return out, nil
}

// GetObject implements rest.ObjectGetter when the storage can return
// stored objects (it always can: the etcd3 store and the cacher do).
func (e *Store) GetObject(ctx context.Context, name string, options *metav1.GetOptions) (*storage.Object, error) {
	getter, ok := e.Storage.(storage.ObjectGetter)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("the storage of %s cannot return stored objects", e.DefaultQualifiedResource))
	}
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	obj, err := getter.GetObject(ctx, key, storage.GetOptions{ResourceVersion: options.ResourceVersion})
	if err != nil {
		return nil, interpretGetError(err, e.DefaultQualifiedResource, name)
	}
	return obj, nil
}

// setKind gives obj the store's kind, as it will be stored and served.
func (e *Store) setKind(obj runtime.Object) {
	if !e.Kind.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(e.Kind)
	}
}

// StorageReadiness reports whether the resource's store can serve (a watch
// cache has its first list).
func (e *Store) StorageReadiness() error { return e.Storage.ReadinessCheck() }
