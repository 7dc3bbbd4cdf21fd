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
	"runtime/debug"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/api/openapi"
	"github.com/miniapiserver/miniapiserver/pkg/registry/conversion"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// typeConverter knows the structure of every served kind, from the
// OpenAPI schemas the server publishes. It is built on the first write
// (about 60 ms and 2 MiB, mostly the parsed schemas), so that a server
// that only reads never pays for it.
var typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	schemas, err := openapi.Schemas()
	if err != nil {
		return nil, err
	}
	tc, err := managedfields.NewTypeConverter(schemas, false)
	// Reading the schemas allocates about 12 MiB, of which 2 stay: give
	// the rest back to the system now rather than hold it as idle heap.
	debug.FreeOSMemory()
	return tc, err
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
	return managedfields.NewDefaultFieldManager(tc, objectConvertor(), Defaulter(storage), api.Scheme,
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
	return conversion.Builtin().ObjectConvertor(runtime.UnsafeObjectConvertor(api.Scheme))
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
	return &trackingCreater{Creater: c, kind: kind, manager: manager}
}

type trackingCreater struct {
	rest.Creater
	kind    schema.GroupVersionKind
	manager string

	once sync.Once
	fm   *managedfields.FieldManager
	err  error
}

// Create implements rest.Creater.
func (c *trackingCreater) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	c.once.Do(func() { c.fm, c.err = New(c.kind, "", c.Creater) })
	if c.err != nil {
		return nil, c.err
	}
	Defaulter(c.Creater).Default(obj)
	obj = c.fm.UpdateNoErrors(c.Creater.New(), obj, c.manager)
	return c.Creater.Create(ctx, obj, createValidation, options)
}
