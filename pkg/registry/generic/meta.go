package generic

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// generateNameSuffixLen is the length of the random suffix generateName
// gets, as in kube.
const generateNameSuffixLen = 5

// maxNameGenerationAttempts bounds the retries of a create whose generated
// name collided.
const maxNameGenerationAttempts = 8

// fillSystemFields sets what the server owns on a new object.
func fillSystemFields(m metav1.Object) {
	m.SetCreationTimestamp(metav1.Now())
	m.SetUID(types.UID(uuid.NewString()))
}

// wipeSystemFields clears the server-owned fields a client sent on a
// create through update or apply.
func wipeSystemFields(m metav1.Object) {
	m.SetCreationTimestamp(metav1.Time{})
	m.SetUID("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// maxGenerateNameBase keeps room for the random suffix within the 63
// characters names of label-validated kinds may have.
const maxGenerateNameBase = 63 - generateNameSuffixLen

// generateName fills metadata.name from metadata.generateName, with the
// resource's generator (nil: SimpleNameGenerator).
func generateName(m metav1.Object, generator func(base string) string) {
	if m.GetGenerateName() != "" && m.GetName() == "" {
		if generator == nil {
			generator = SimpleNameGenerator
		}
		m.SetName(generator(m.GetGenerateName()))
	}
}

// SimpleNameGenerator is kube's: base, cut to maxGenerateNameBase, and a
// random suffix of five characters.
func SimpleNameGenerator(base string) string {
	return base[:min(len(base), maxGenerateNameBase)] + utilrand.String(generateNameSuffixLen)
}

// ensureNamespace makes the object's namespace that of the request: a
// namespaced object takes the URL's, and may not name another one; a
// cluster-scoped one has none.
// EnsureNamespace gives obj the namespace of the request (ctx) when it
// names none, and refuses one that differs, with kube's messages; a
// cluster-scoped object loses any namespace. For storages other than the
// Store that keep the objects they create in a namespace's URL.
func EnsureNamespace(ctx context.Context, obj runtime.Object, namespaced bool) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return ensureNamespace(ctx, m, namespaced)
}

func ensureNamespace(ctx context.Context, m metav1.Object, namespaced bool) error {
	want := ""
	if namespaced {
		want = request.NamespaceValue(ctx)
	}
	switch got := m.GetNamespace(); {
	case got == want:
	case got == "":
		m.SetNamespace(want)
	case want == "" && !namespaced:
		m.SetNamespace("")
	case want == "":
		return apierrors.NewBadRequest("Namespace parameter required.")
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// beforeCreate prepares and validates an object about to be created,
// running the create hooks of path (the endpoint's), then the request's
// mutating admission (mutate, nil for none). The FinishFunc it
// returns (never nil on success) must be called with whether the object
// was stored.
func (e *Store) beforeCreate(ctx context.Context, path *updatePath, obj runtime.Object, mutate rest.MutateObjectFunc,
	options *metav1.CreateOptions) (FinishFunc, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := ensureNamespace(ctx, m, e.createStrategy.NamespaceScoped()); err != nil {
		return nil, err
	}
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
	e.setKind(obj)
	if d, ok := e.createStrategy.(rest.Defaulter); ok {
		d.Default(obj)
	}
	if path.admitCreate != nil {
		if err := path.admitCreate(ctx, obj); err != nil {
			return nil, err
		}
	}
	finish, err := runBeginCreate(ctx, path.beginCreate, obj, options)
	if err != nil {
		return nil, err
	}
	if err := e.admitNew(ctx, path.admitCreate, mutate, obj); err != nil {
		finish(ctx, false)
		return nil, err
	}
	// After mutating admission, as kube generates it in the store after
	// its handler admitted the object: webhooks see the generateName
	// alone, and may set a name of their own.
	generateName(m, e.nameGenerator)
	if err := e.prepareAndValidateCreate(ctx, obj, m); err != nil {
		finish(ctx, false)
		return nil, err
	}
	return finish, nil
}

func (e *Store) prepareAndValidateCreate(ctx context.Context, obj runtime.Object, m metav1.Object) error {
	e.createStrategy.PrepareForCreate(ctx, obj)
	errs := e.createStrategy.Validate(ctx, obj)
	if len(errs) == 0 {
		// Resource-specific messages first; the generic ones only when
		// those pass, as kube does.
		errs = genericvalidation.ValidateObjectMetaAccessor(m, e.createStrategy.NamespaceScoped(),
			path.ValidatePathSegmentName, field.NewPath("metadata"))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(e.groupKindOf(obj), m.GetName(), uniqueErrors(errs))
	}
	for _, w := range e.createStrategy.WarningsOnCreate(ctx, obj) {
		request.AddWarning(ctx, w)
	}
	e.createStrategy.Canonicalize(obj)
	return nil
}

// admit runs the request's mutating admission (mutate, nil for none) on obj,
// with a copy of old (nil on a create): after the Begin hooks, before the
// strategy, where kube's mutating webhooks run. What it changes is
// prepared and validated as the client's own object.
func (e *Store) admit(ctx context.Context, mutate rest.MutateObjectFunc, obj, old runtime.Object) error {
	if mutate == nil {
		return nil
	}
	if old != nil {
		old = old.DeepCopyObject()
	}
	return mutate(ctx, obj, old)
}

// admitNew runs the request's mutating admission on a new obj, then again
// the path's AdmitCreate hook if that admission changed obj (kube's
// reinvocation of its built-in plugins: a container a webhook adds gets
// its pod's service account token mounted too).
func (e *Store) admitNew(ctx context.Context, again AdmitCreateFunc, mutate rest.MutateObjectFunc, obj runtime.Object) error {
	if again == nil || mutate == nil {
		return e.admit(ctx, mutate, obj, nil)
	}
	before := obj.DeepCopyObject()
	if err := mutate(ctx, obj, nil); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(before, obj) {
		return nil
	}
	return again(ctx, obj)
}

// beforeUpdate prepares and validates obj replacing old, as the endpoint
// of path does, running the request's mutating admission (mutate, nil for
// none) after the path's Begin hooks. The FinishFunc it returns (never
// nil on success) must be called with whether obj was stored.
func (e *Store) beforeUpdate(ctx context.Context, path *updatePath, obj, old runtime.Object, mutate rest.MutateObjectFunc,
	options *metav1.UpdateOptions) (FinishFunc, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if err := ensureNamespace(ctx, m, path.strategy.NamespaceScoped()); err != nil {
		return nil, err
	}
	e.setKind(obj)
	if d, ok := path.strategy.(rest.Defaulter); ok {
		d.Default(obj)
	}
	// Clients cannot set generation: strategies bump it on spec changes.
	m.SetGeneration(oldMeta.GetGeneration())
	finish, err := path.runBeginUpdate(ctx, obj, old, options)
	if err != nil {
		return nil, err
	}
	if err := e.admit(ctx, mutate, obj, old); err != nil {
		finish(ctx, false)
		return nil, err
	}
	if err := e.prepareAndValidateUpdate(ctx, path.strategy, obj, old, m, oldMeta); err != nil {
		finish(ctx, false)
		return nil, err
	}
	return finish, nil
}

func (e *Store) prepareAndValidateUpdate(ctx context.Context, strategy rest.RESTUpdateStrategy, obj, old runtime.Object, m, oldMeta metav1.Object) error {
	strategy.PrepareForUpdate(ctx, obj, old)
	if m.GetUID() == "" {
		m.SetUID(oldMeta.GetUID())
	}
	if ts := oldMeta.GetCreationTimestamp(); !ts.IsZero() {
		m.SetCreationTimestamp(ts)
	}
	// An update never removes or moves a deletion in progress.
	if oldMeta.GetDeletionTimestamp() != nil {
		m.SetDeletionTimestamp(oldMeta.GetDeletionTimestamp())
	}
	if oldMeta.GetDeletionGracePeriodSeconds() != nil && m.GetDeletionGracePeriodSeconds() == nil {
		m.SetDeletionGracePeriodSeconds(oldMeta.GetDeletionGracePeriodSeconds())
	}
	m.SetSelfLink("")
	// kube checks the new metadata as on a create, then as an update,
	// then the strategy's rules (which check the metadata again).
	metaPath := field.NewPath("metadata")
	errs := genericvalidation.ValidateObjectMetaAccessor(m, strategy.NamespaceScoped(), path.ValidatePathSegmentName, metaPath)
	errs = append(errs, genericvalidation.ValidateObjectMetaAccessorUpdate(m, oldMeta, metaPath)...)
	errs = append(errs, strategy.ValidateUpdate(ctx, obj, old)...)
	if len(errs) > 0 {
		return apierrors.NewInvalid(e.groupKindOf(obj), m.GetName(), uniqueErrors(errs))
	}
	for _, w := range strategy.WarningsOnUpdate(ctx, obj, old) {
		request.AddWarning(ctx, w)
	}
	strategy.Canonicalize(obj)
	return nil
}

// groupKindOf names the kind of obj in errors: the one an unstructured
// object names (as kube's typer of custom resources reads it), else the
// Store's.
func (e *Store) groupKindOf(obj runtime.Object) schema.GroupKind {
	if _, ok := obj.(runtime.Unstructured); ok {
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
			return gvk.GroupKind()
		}
	}
	return e.groupKind()
}

func (e *Store) groupKind() schema.GroupKind {
	if !e.kind.Empty() {
		return e.kind.GroupKind()
	}
	return schema.GroupKind{Group: e.qualifiedResource.Group, Kind: e.qualifiedResource.Resource}
}

func objectName(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", apierrors.NewInternalError(fmt.Errorf("object has no metadata: %w", err))
	}
	return m.GetName(), nil
}

// uniqueErrors drops the errors that repeat an earlier one (same field,
// type and message), keeping the first: the same rule is often checked
// twice (the generic metadata checks and the strategy's), and kube's
// declarative validation pass answers each once (ErrorList.Filter).
func uniqueErrors(errs field.ErrorList) field.ErrorList {
	seen := make(map[string]bool, len(errs))
	out := errs[:0:0]
	for _, err := range errs {
		if msg := err.Error(); !seen[msg] {
			seen[msg] = true
			out = append(out, err)
		}
	}
	return out
}
