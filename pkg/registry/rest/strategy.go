package rest

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// RESTCreateStrategy specialises Create for one resource.
type RESTCreateStrategy interface {
	NamespaceScoped() bool
	// PrepareForCreate clears what a client may not set on create (usually
	// status) and sets what the server decides (generation).
	PrepareForCreate(ctx context.Context, obj runtime.Object)
	// Validate returns the resource's own validation errors; object
	// metadata is validated by the Store.
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	// WarningsOnCreate returns warnings for the client (deprecated fields).
	WarningsOnCreate(ctx context.Context, obj runtime.Object) []string
	// Canonicalize puts the object in its stored form (sorting, ...).
	Canonicalize(obj runtime.Object)
}

// RESTUpdateStrategy specialises Update for one resource.
type RESTUpdateStrategy interface {
	NamespaceScoped() bool
	// AllowCreateOnUpdate lets a PUT create a missing object.
	AllowCreateOnUpdate() bool
	// PrepareForUpdate keeps what this endpoint may not change (status on
	// the main resource, everything but status on /status) and bumps
	// generation when the spec changed.
	PrepareForUpdate(ctx context.Context, obj, old runtime.Object)
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string
	Canonicalize(obj runtime.Object)
	// AllowUnconditionalUpdate lets a PUT without resourceVersion through.
	AllowUnconditionalUpdate() bool
}

// RESTGracefulDeleteStrategy is implemented by resources whose objects
// linger for a grace period when deleted (pods).
type RESTGracefulDeleteStrategy interface {
	// CheckGracefulDelete sets options.GracePeriodSeconds to the grace
	// period to use, and reports whether deletion is graceful at all.
	CheckGracefulDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool
}

// Defaulter is implemented by strategies of kinds with defaults: the Store
// applies them to every object a client sends (create, update, patch),
// before PrepareForCreate or PrepareForUpdate, as kube's decoder does.
// Storages implement it too: the HTTP layer defaults what it decodes
// before it records managed fields, so that, as in kube, the manager of a
// write owns the fields defaulted in it.
type Defaulter interface {
	Default(obj runtime.Object)
}

// UnknownFieldPruner is implemented by strategies (and storages) of kinds
// whose fields a schema lists rather than a Go type (custom resources):
// the HTTP layer decodes request bodies into unstructured objects, and
// PruneUnknownFields drops from them what the schema does not declare,
// returning the paths dropped, which the request's fieldValidation
// reports as unknown fields ("unknown field \"spec.foo\""), as kube's
// decoder of custom resources does. An error is a malformed object.
type UnknownFieldPruner interface {
	PruneUnknownFields(obj runtime.Object) ([]string, error)
}

// Structure describes, for server-side apply, a kind whose Go type does
// not (custom resources, which are unstructured).
type Structure struct {
	// TypeConverter returns the structure of the kind's versions. It is
	// called on the first write, so that a kind that is only read never
	// builds it.
	TypeConverter func() (managedfields.TypeConverter, error)
	// Convertor converts the kind's objects between its versions, for
	// the managed fields recorded at other versions than the request's.
	Convertor runtime.ObjectConvertor
}

// StructureProvider is implemented by storages of kinds with a Structure
// (nil for the others).
type StructureProvider interface {
	Structure() *Structure
}

// ResetFieldsStrategy is implemented by strategies that reset fields a
// client sends on their endpoint (the main resource keeps status, /status
// keeps spec): server-side apply must not record a manager as owning
// them. The map is by API version ("v1", "apps/v1"); the HTTP layer reads
// it once per endpoint, from the storage (which delegates to its update
// strategy).
type ResetFieldsStrategy interface {
	GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set
}

// GarbageCollectionPolicy says what propagationPolicy a delete gets when
// the client names none.
type GarbageCollectionPolicy string

// The policies of kube's strategies.
const (
	DeleteDependents GarbageCollectionPolicy = "DeleteDependents"
	OrphanDependents GarbageCollectionPolicy = "OrphanDependents"
	Unsupported      GarbageCollectionPolicy = "Unsupported"
)

// GarbageCollectionDeleteStrategy is implemented by resources whose
// default propagation is not background (kube's legacy workloads orphan).
type GarbageCollectionDeleteStrategy interface {
	DefaultGarbageCollectionPolicy(ctx context.Context) GarbageCollectionPolicy
}

// PrepareForDeleteStrategy is implemented by resources that finish every
// deletion themselves (kube's CRDs, whose custom resources go first): the
// first delete of an object does not remove it but marks it deleted
// (deletionTimestamp) once PrepareForDelete has added what finishing the
// deletion needs (a finalizer, a condition). PrepareForDelete may set the
// deletionTimestamp itself, as kube's CRD storage does: the generation
// and deletionGracePeriodSeconds are then left alone.
type PrepareForDeleteStrategy interface {
	PrepareForDelete(ctx context.Context, obj runtime.Object)
}

// DeleteWarningsStrategy is implemented by strategies that warn about the
// options of a delete (kube's jobs warn that their pods stay when the
// client names no propagation policy).
type DeleteWarningsStrategy interface {
	WarningsOnDelete(ctx context.Context, options *metav1.DeleteOptions) []string
}

// PendingFinalizersStrategy is implemented by resources that keep
// finalizers of their own beside metadata.finalizers (namespaces:
// spec.finalizers). An update that empties metadata.finalizers of an
// object being deleted finishes the deletion only when FinalizersPending
// reports none left, as kube's ShouldDeleteDuringUpdate of the resource.
type PendingFinalizersStrategy interface {
	FinalizersPending(obj runtime.Object) bool
}
