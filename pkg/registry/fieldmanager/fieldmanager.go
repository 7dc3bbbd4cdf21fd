// Package fieldmanager builds the field managers of the served kinds:
// what records in metadata.managedFields who set which field, and merges
// server-side apply configurations. The HTTP handlers run one per
// endpoint, as kube's do; the server's own writes (the system namespaces,
// the kubernetes service, what kube's controllers would create) go
// through TrackingCreater so that they carry the managed fields kube's
// in-process clients leave.
//
// It sits in the registry layer: it knows the storages (their defaults and
// reset fields) and the API tables (api/), nothing of HTTP.
package fieldmanager

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/api/openapi/structure"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// typeConverter knows the structure of every served kind, from the
// OpenAPI definitions the server publishes, as hack/openapi-gen compiled
// them into the binary (api/openapi/structure): building it indexes the
// kinds, where decoding definitions.json and converting it took about
// 60 ms and 12 MiB at every server's first write.
var typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	return newBuiltinConverter(structure.Types, structure.Kinds)
})

// New returns the field manager of kind as storage serves it (subresource
// "" for the main resource, "status", "scale"...): the fields storage's
// strategy resets (rest.ResetFieldsStrategy) are owned by no one there,
// and applied objects get the kind's defaults (rest.Defaulter).
func New(kind schema.GroupVersionKind, subresource string, storage any) (*managedfields.FieldManager, error) {
	if p, ok := storage.(rest.StructureProvider); ok && p.Structure() != nil {
		return newUnstructured(kind, subresource, storage, p.Structure())
	}
	tc, err := typeConverter()
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: building the type converter: %w", err)
	}
	return managedfields.NewDefaultFieldManager(tc, objectConvertor(), Defaulter(storage), api.Scheme(),
		kind, hub(kind, storage), subresource, resetFields(storage))
}

// newUnstructured is New for a kind described by structure (custom
// resources): as kube's field manager of custom resources, it works at
// the endpoint's own version (its hub), and tolerates fields the
// structure does not know where the kind preserves them.
func newUnstructured(kind schema.GroupVersionKind, subresource string, storage any, structure *rest.Structure) (*managedfields.FieldManager, error) {
	tc, err := structure.TypeConverter()
	if err != nil {
		return nil, fmt.Errorf("fieldmanager: the structure of %v: %w", kind, err)
	}
	return managedfields.NewDefaultCRDFieldManager(tc, structure.Convertor, Defaulter(storage), unstructuredCreater{},
		kind, kind.GroupVersion(), subresource, resetFields(storage))
}

// unstructuredCreater makes the empty objects of unstructured kinds.
type unstructuredCreater struct{}

func (unstructuredCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// resetFields are the fields storage's strategy resets
// (rest.ResetFieldsStrategy), which no manager owns at its endpoint.
func resetFields(storage any) map[fieldpath.APIVersion]fieldpath.Filter {
	if r, ok := storage.(rest.ResetFieldsStrategy); ok {
		return fieldpath.NewExcludeFilterSetMap(r.GetResetFields())
	}
	return nil
}

// hub is the version the field manager converts the objects it makes to:
// the resource's storage version when the endpoint serves another version
// of the same group (as kube's field manager gives back internal
// objects), else the endpoint's own. Managed fields recorded at another
// version of the resource (an apply at autoscaling/v1, then one at v2) are
// compared after converting the object to that version.
func hub(kind schema.GroupVersionKind, storage any) schema.GroupVersion {
	if p, ok := storage.(rest.StorageVersionProvider); ok && p.StorageVersion().Group == kind.Group {
		return p.StorageVersion().GroupVersion()
	}
	return kind.GroupVersion()
}

// objectConvertor converts between the versions of the kinds served at
// several (conversion.Builtin); any other kind has one version.
var objectConvertor = sync.OnceValue(func() runtime.ObjectConvertor {
	return conversion.Builtin().ObjectConvertor(runtime.UnsafeObjectConvertor(api.Scheme()))
})

// Defaulter applies the defaults of the kind storage serves, when it is a
// rest.Defaulter (none otherwise).
func Defaulter(storage any) runtime.ObjectDefaulter {
	if d, ok := storage.(rest.Defaulter); ok {
		return d
	}
	return noDefaults{}
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// TrackingCreater returns c, creating objects of kind as manager, with
// an Update entry in their managed fields, as kube's in-process clients
// ("kube-apiserver") and its controllers ("kube-controller-manager")
// leave them.
func TrackingCreater(c rest.Creater, kind schema.GroupVersionKind, manager string) rest.Creater {
	return &trackingCreater{Creater: c, w: NewWriter(c, kind, "", manager)}
}

type trackingCreater struct {
	rest.Creater
	w *Writer
}

// Create implements rest.Creater.
func (c *trackingCreater) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	obj, err := c.w.track(obj, c.Creater.New())
	if err != nil {
		return nil, err
	}
	return c.Creater.Create(ctx, obj, createValidation, options)
}

// Writer writes objects of one kind (at one subresource) through its
// storage as a named manager, recording the manager's fields in
// metadata.managedFields as the writes of kube's in-process clients and
// controllers do. The server's own controllers write through it.
type Writer struct {
	storage     any
	kind        schema.GroupVersionKind
	subresource string
	manager     string

	once sync.Once
	fm   *managedfields.FieldManager
	err  error
}

// NewWriter returns a Writer of kind, at subresource ("" for the main
// resource), through storage (a rest.Creater to create, a rest.Updater
// to update or apply).
func NewWriter(storage any, kind schema.GroupVersionKind, subresource, manager string) *Writer {
	return &Writer{storage: storage, kind: kind, subresource: subresource, manager: manager}
}

func (w *Writer) fieldManager() (*managedfields.FieldManager, error) {
	w.once.Do(func() { w.fm, w.err = New(w.kind, w.subresource, w.storage) })
	return w.fm, w.err
}

// track defaults obj and records the manager's update of it from old.
func (w *Writer) track(obj, old runtime.Object) (runtime.Object, error) {
	fm, err := w.fieldManager()
	if err != nil {
		return nil, err
	}
	Defaulter(w.storage).Default(obj)
	return fm.UpdateNoErrors(old, obj, w.manager), nil
}

// Create creates obj (an Update in its managed fields).
func (w *Writer) Create(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	c, ok := w.storage.(rest.Creater)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: %s cannot be created", w.kind.Kind)
	}
	obj, err := w.track(obj, c.New())
	if err != nil {
		return nil, err
	}
	return c.Create(ctx, obj, nil, &metav1.CreateOptions{FieldManager: w.manager})
}

// Update replaces the object named by obj with obj, which names the
// resourceVersion it was read at (a conflict otherwise).
func (w *Writer) Update(ctx context.Context, obj runtime.Object) (runtime.Object, error) {
	u, m, err := w.updater(obj)
	if err != nil {
		return nil, err
	}
	info := &rest.DefaultUpdatedObjectInfo{Obj: obj, Transformers: []rest.TransformFunc{
		func(_ context.Context, obj, old runtime.Object) (runtime.Object, error) { return w.track(obj, old) },
	}}
	updated, _, err := u.Update(ctx, m.GetName(), info, nil, nil, false, &metav1.UpdateOptions{FieldManager: w.manager})
	return updated, err
}

// ForceApply applies config (a partial object of the kind, as server-side
// apply takes it) to the object it names, taking over fields other
// managers own.
func (w *Writer) ForceApply(ctx context.Context, config *unstructured.Unstructured) (runtime.Object, error) {
	u, _, err := w.updater(config)
	if err != nil {
		return nil, err
	}
	fm, err := w.fieldManager()
	if err != nil {
		return nil, err
	}
	updated, _, err := u.Update(ctx, config.GetName(), applyInfo{fm: fm, config: config, manager: w.manager}, nil, nil, false,
		&metav1.UpdateOptions{FieldManager: w.manager})
	return updated, err
}

func (w *Writer) updater(obj runtime.Object) (rest.Updater, metav1.Object, error) {
	u, ok := w.storage.(rest.Updater)
	if !ok {
		return nil, nil, fmt.Errorf("fieldmanager: %s cannot be updated", w.kind.Kind)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return u, m, nil
}

// applyInfo is the rest.UpdatedObjectInfo of a forced apply.
type applyInfo struct {
	fm      *managedfields.FieldManager
	config  *unstructured.Unstructured
	manager string
}

func (applyInfo) Preconditions() *metav1.Preconditions { return nil }

func (a applyInfo) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	return a.fm.Apply(old.DeepCopyObject(), a.config.DeepCopy(), a.manager, true)
}

// TrackingUpdater returns u, updating objects of kind (through
// subresource, "" for the main resource) as manager, with an Update
// entry in their managed fields, as kube's in-process clients leave them
// (the budgets an eviction updates through poddisruptionbudgets/status).
func TrackingUpdater(u rest.Updater, kind schema.GroupVersionKind, subresource, manager string) rest.Updater {
	return &trackingUpdater{Updater: u, kind: kind, subresource: subresource, manager: manager}
}

type trackingUpdater struct {
	rest.Updater
	kind        schema.GroupVersionKind
	subresource string
	manager     string

	once sync.Once
	fm   *managedfields.FieldManager
	err  error
}

// Update implements rest.Updater: the managed fields are recorded against
// the object current at each try of the update.
func (u *trackingUpdater) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	u.once.Do(func() { u.fm, u.err = New(u.kind, u.subresource, u.Updater) })
	if u.err != nil {
		return nil, false, u.err
	}
	tracked := &trackedInfo{UpdatedObjectInfo: objInfo, track: func(live, obj runtime.Object) runtime.Object {
		Defaulter(u.Updater).Default(obj)
		return u.fm.UpdateNoErrors(live, obj, u.manager)
	}}
	return u.Updater.Update(ctx, name, tracked, createValidation, updateValidation, forceAllowCreate, options)
}

// trackedInfo records the managed fields of the object objInfo computes.
type trackedInfo struct {
	rest.UpdatedObjectInfo
	track func(live, obj runtime.Object) runtime.Object
}

func (i *trackedInfo) UpdatedObject(ctx context.Context, live runtime.Object) (runtime.Object, error) {
	obj, err := i.UpdatedObjectInfo.UpdatedObject(ctx, live)
	if err != nil {
		return nil, err
	}
	return i.track(live, obj), nil
}

// TrackingUpdate returns the transform (for rest.DefaultUpdatedObjectInfo)
// that records an update of kind, served by storage, as made by manager:
// an Update entry in the managed fields, as kube's in-process clients
// leave it.
func TrackingUpdate(storage any, kind schema.GroupVersionKind, manager string) rest.TransformFunc {
	fm := sync.OnceValues(func() (*managedfields.FieldManager, error) { return New(kind, "", storage) })
	return func(_ context.Context, obj, live runtime.Object) (runtime.Object, error) {
		m, err := fm()
		if err != nil {
			return nil, err
		}
		Defaulter(storage).Default(obj)
		return m.UpdateNoErrors(live, obj, manager), nil
	}
}

// TypeConverter returns the type converter of the served kinds (built
// on first use), for server-side apply's merges elsewhere (mutating
// admission policies' apply configurations).
func TypeConverter() (managedfields.TypeConverter, error) { return typeConverter() }
