package generic

import (
	"context"
	"fmt"
	"path"
	"sort"
	"sync/atomic"

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
// implementation of every verb, specialised by strategies and hooks. A
// Store is built from its declaration (Resource.Build) and never changes
// afterwards: its fields are unexported so that no caller can patch a
// hook or a strategy onto a Store in use. Subresources share it by
// pointer (status and the like through an updatePath of their own).
type Store struct {
	// newFunc returns an empty object of the resource's kind; newListFunc
	// an empty list of it.
	newFunc     func() runtime.Object
	newListFunc func() runtime.Object
	// kind is the kind served; objects are stored with it as TypeMeta.
	kind schema.GroupVersionKind
	// qualifiedResource names the resource in errors ("pods");
	// singularResource is its singular name ("pod").
	qualifiedResource schema.GroupResource
	singularResource  schema.GroupResource

	// keyRootFunc returns the key prefix of a list in ctx's namespace;
	// keyFunc the key of a named object.
	keyRootFunc func(ctx context.Context) string
	keyFunc     func(ctx context.Context, name string) (string, error)

	// ttlFunc returns the time to live of an object in seconds (events);
	// existing is the current TTL on update. nil: no TTL.
	ttlFunc func(obj runtime.Object, existing uint64, update bool) (uint64, error)

	createStrategy rest.RESTCreateStrategy
	// nameGenerator makes a name from metadata.generateName (nil:
	// SimpleNameGenerator).
	nameGenerator func(base string) string
	// mainUpdate is how the resource's own endpoint updates: its strategy
	// and Begin hooks. Subresources update through paths of their own.
	mainUpdate updatePath
	// deleteStrategy may implement rest.RESTGracefulDeleteStrategy and
	// rest.GarbageCollectionDeleteStrategy.
	deleteStrategy rest.Scoper
	// afterDeleteFunc runs whichever endpoint removes an object.
	afterDeleteFunc AfterDeleteFunc

	// returnDeletedObject makes Delete return the deleted object instead
	// of a Status.
	returnDeletedObject bool

	tableConvertor rest.TableConvertor

	// fieldLabelConversionFunc, when set, checks and converts the fields
	// of field selectors (kube's per-kind conversion); without it a field
	// selector may name the fields attrFunc returns.
	fieldLabelConversionFunc FieldLabelConversionFunc

	shortNames []string
	categories []string

	// storage is the resource's store, from RESTOptions.Decorator;
	// destroyFunc releases it and what the declaration holds.
	storage     storage.Interface
	destroyFunc func()
	// counted is the last count of the objects in etcd (-1: none yet),
	// for Stats when the store has no cache; shared with the views of
	// other groups' versions (servedAs), which read the same storage.
	counted *atomic.Int64

	attrFunc         storage.AttrFunc
	selectableFields map[string]bool

	// structure describes an unstructured kind for server-side apply.
	structure *rest.Structure
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

// newStore builds the Store r declares, in group version gv, with
// strategy (r's, or its default).
func newStore(r Resource, gv schema.GroupVersion, strategy Strategy, getter RESTOptionsGetter) (*Store, error) {
	e := &Store{
		newFunc:           r.New,
		newListFunc:       r.NewList,
		kind:              gv.WithKind(r.Kind),
		qualifiedResource: schema.GroupResource{Group: gv.Group, Resource: r.Name},
		singularResource:  schema.GroupResource{Group: gv.Group, Resource: r.Singular},
		ttlFunc:           r.TTLFunc,
		createStrategy:    strategy,
		nameGenerator:     r.NameGenerator,
		mainUpdate: updatePath{strategy: strategy, admitCreate: r.Hooks.AdmitCreate, beginCreate: r.Hooks.BeginCreate,
			beginUpdate: r.Hooks.BeginUpdate},
		deleteStrategy:           strategy,
		afterDeleteFunc:          r.Hooks.AfterDelete,
		returnDeletedObject:      r.ReturnDeletedObject,
		tableConvertor:           r.Table,
		fieldLabelConversionFunc: r.FieldLabelConversion,
		shortNames:               r.ShortNames,
		categories:               r.Categories,
		attrFunc:                 r.AttrFunc,
		structure:                r.Structure,
	}
	if e.newFunc == nil || e.newListFunc == nil {
		return nil, fmt.Errorf("store for %s must have New and NewList", e.qualifiedResource)
	}
	if r.Singular == "" {
		e.singularResource = e.qualifiedResource
	}
	if e.attrFunc == nil {
		e.attrFunc = DefaultAttrFunc(r.Namespaced)
	}
	if err := e.recordSelectableFields(); err != nil {
		return nil, err
	}
	if e.tableConvertor == nil {
		e.tableConvertor = DefaultTableConvertor(e.qualifiedResource)
	}
	opts, err := getter.GetRESTOptions(e.qualifiedResource)
	if err != nil {
		return nil, err
	}
	e.setKeyFuncs(opts.ResourcePrefix, r.Namespaced)
	cfg := StorageConfig(e.qualifiedResource, opts.ResourcePrefix, e.newFunc, r.Namespaced)
	cfg.AttrFunc, cfg.IndexFields, cfg.Normalize = e.attrFunc, r.IndexFields, r.Normalize
	s, destroy, err := opts.Decorator(opts.StorageFactory, cfg)
	if err != nil {
		return nil, fmt.Errorf("building the store of %s: %w", e.qualifiedResource, err)
	}
	e.storage = s // before the counter reads it
	e.counted = new(atomic.Int64)
	e.counted.Store(-1)
	stopCounting := e.startObservingCount(opts.Metrics, opts.ResourcePrefix, opts.CountMetricPollPeriod)
	e.destroyFunc = func() {
		stopCounting()
		destroy()
	}
	return e, nil
}

// setKeyFuncs sets the keys of the resource's objects under prefix.
func (e *Store) setKeyFuncs(prefix string, namespaced bool) {
	e.keyRootFunc = func(ctx context.Context) string {
		if ns := request.NamespaceValue(ctx); namespaced && ns != "" {
			return prefix + "/" + ns
		}
		return prefix
	}
	e.keyFunc = func(ctx context.Context, name string) (string, error) {
		return objectKey(ctx, prefix, name, namespaced)
	}
}

// StorageConfig is the storage.Config of a resource's objects kept under
// prefix, with the default attributes (DefaultAttrFunc): what a Store's
// storage is built from, and what registry code that keeps objects
// without a Store (the service allocators) builds a raw store from.
func StorageConfig(gr schema.GroupResource, prefix string, newFunc func() runtime.Object, namespaced bool) storage.Config {
	return storage.Config{
		Resource:       gr.String(),
		ResourcePrefix: prefix,
		NewFunc:        newFunc,
		AttrFunc:       DefaultAttrFunc(namespaced),
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
}

// recordSelectableFields remembers which fields a field selector may name:
// those AttrFunc returns.
func (e *Store) recordSelectableFields() error {
	_, f, err := e.attrFunc(e.newFunc())
	if err != nil {
		return fmt.Errorf("attributes of %s: %w", e.qualifiedResource, err)
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

// AttrFuncOf is the AttrFunc of a kind T whose field selectors name more
// than its metadata: add puts obj's fields into set, which holds the
// metadata's (ObjectMetaFieldsSet). what names T in the error of an
// object of another type ("a pod").
func AttrFuncOf[T interface {
	runtime.Object
	metav1.Object
}](what string, namespaced bool, add func(obj T, set fields.Set)) storage.AttrFunc {
	return func(obj runtime.Object) (labels.Set, fields.Set, error) {
		o, ok := obj.(T)
		if !ok {
			return nil, nil, fmt.Errorf("not %s: %T", what, obj)
		}
		set := ObjectMetaFieldsSet(o, namespaced)
		add(o, set)
		return o.GetLabels(), set, nil
	}
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
func (e *Store) New() runtime.Object { return e.newFunc() }

// NewList implements rest.Lister.
func (e *Store) NewList() runtime.Object { return e.newListFunc() }

// Destroy implements rest.Storage.
func (e *Store) Destroy() { e.destroyFunc() }

// DeleteReturnsDeletedObject implements rest.MayReturnFullObjectDeleter.
func (e *Store) DeleteReturnsDeletedObject() bool { return e.returnDeletedObject }

// NamespaceScoped implements rest.Scoper.
func (e *Store) NamespaceScoped() bool { return e.createStrategy.NamespaceScoped() }

// ShortNames implements rest.ShortNamesProvider.
func (e *Store) ShortNames() []string { return e.shortNames }

// Categories implements rest.CategoriesProvider.
func (e *Store) Categories() []string { return e.categories }

// GetSingularName implements rest.SingularNameProvider.
func (e *Store) GetSingularName() string { return e.singularResource.Resource }

// ConvertToTable implements rest.TableConvertor.
func (e *Store) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return e.tableConvertor.ConvertToTable(ctx, obj, tableOptions)
}

// Get implements rest.Getter.
func (e *Store) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	out := e.newFunc()
	if err := e.storage.Get(ctx, key, storage.GetOptions{ResourceVersion: options.ResourceVersion}, out); err != nil {
		return nil, interpretGetError(err, e.qualifiedResource, name)
	}
	return out, nil
}

// GetObject implements rest.ObjectGetter when the storage can return
// stored objects (it always can: the etcd3 store and the cacher do).
func (e *Store) GetObject(ctx context.Context, name string, options *metav1.GetOptions) (*storage.Object, error) {
	getter, ok := e.storage.(storage.ObjectGetter)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("the storage of %s cannot return stored objects", e.qualifiedResource))
	}
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	obj, err := getter.GetObject(ctx, key, storage.GetOptions{ResourceVersion: options.ResourceVersion})
	if err != nil {
		return nil, interpretGetError(err, e.qualifiedResource, name)
	}
	return obj, nil
}

// setKind gives obj the store's kind, as it will be stored and served.
// An unstructured object keeps the kind it names, which its strategy
// checks (custom resources).
func (e *Store) setKind(obj runtime.Object) {
	if _, ok := obj.(runtime.Unstructured); ok {
		return
	}
	if !e.kind.Empty() {
		obj.GetObjectKind().SetGroupVersionKind(e.kind)
	}
}

// StorageReadiness reports whether the resource's store can serve (a watch
// cache has its first list).
func (e *Store) StorageReadiness() error { return e.storage.ReadinessCheck() }

// HostsMutation implements rest.MutationHost: the Store runs the
// request's mutating admission after its Begin hooks.
func (e *Store) HostsMutation() bool { return true }
