package core

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// NamespaceNameLabel is the label every namespace carries with its own
// name, so that selectors can pick namespaces by name.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// namespaces declares the store of namespaces, and namespaces/status;
// newNamespaces declares the rest.
var namespaces = generic.Resource{
	Name: "namespaces", Singular: "namespace", Kind: "Namespace",
	ShortNames:     []string{"ns"},
	New:            generic.NewOf[corev1.Namespace],
	NewList:        generic.NewOf[corev1.NamespaceList],
	Strategy:       namespaceStrategy{},
	StatusStrategy: generic.StatusStrategy{Main: namespaceStrategy{}, GroupVersion: "v1", Validate: namespaceStrategy{}.ValidateUpdate},
	AttrFunc:       namespaceAttrs,
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Status", Type: "string", Description: "The status of the namespace"},
		func(ns *corev1.Namespace) interface{} { return string(ns.Status.Phase) }),
}

var namespaceAttrs = generic.AttrFuncOf("a namespace", false, func(ns *corev1.Namespace, set fields.Set) {
	set["status.phase"] = string(ns.Status.Phase)
})

type namespaceStrategy struct {
	generic.BaseStrategy
	resetsStatus
}

// Default keeps the name label of a namespace in place, on create and on
// every update.
func (namespaceStrategy) Default(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[NamespaceNameLabel] = ns.Name
}

// PrepareForCreate: unlike ResetStatus, a new namespace's status is not
// empty but Active, as kube's strategy sets it; and it always has the
// kubernetes finalizer.
func (namespaceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
}

func (namespaceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	// Finalizers change only through /finalize; status only through /status.
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	generic.KeepStatus(obj, old)
}

func (namespaceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	return corevalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
}

func (namespaceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	return corevalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &oldNS.ObjectMeta, field.NewPath("metadata"))
}

// FinalizersPending implements rest.PendingFinalizersStrategy: a
// namespace whose metadata.finalizers are empty still waits for its
// spec.finalizers, whatever endpoint updates it (kube's
// ShouldDeleteNamespaceDuringUpdate). Without it, a status update of a
// Terminating namespace (kube's namespace controller records its
// conditions there) would delete it with its content still in place.
func (namespaceStrategy) FinalizersPending(obj runtime.Object) bool {
	return len(obj.(*corev1.Namespace).Spec.Finalizers) > 0
}

// namespaceFinalizeStrategy serves /finalize: only spec.finalizers change.
type namespaceFinalizeStrategy struct{ namespaceStrategy }

func (namespaceFinalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	generic.KeepStatus(obj, old)
}

// NamespaceREST serves namespaces. Deleting a namespace first marks it
// Terminating; it goes away once its spec.finalizers are empty (the
// namespace controller empties it, then finalizes it). A new namespace
// gets what kube's controllers give it (see namespaceDefaults).
//
// It serves the Store's verbs but those kube's namespace storage lacks
// (namespaceStoreHidden): discovery lists the verbs a storage implements,
// and kube's namespaces have no deletecollection.
type NamespaceREST struct {
	*generic.Store
	namespaceStoreHidden
	// defaults creates what kube's controllers put in every new namespace.
	defaults namespaceDefaults
}

// namespaceStoreHidden hides the Store's methods NamespaceREST does not
// serve: embedded beside the Store, at the same depth, each of its
// methods makes the Store's of that name ambiguous, so that NamespaceREST
// has neither (they are never called). Kube's namespace storage forwards
// only the verbs it serves; besides deletecollection, these are what
// namespaces never had here: the pruning of unknown fields and its API
// version check, a structure for apply, the store's readiness in /readyz,
// its object counts for API Priority and Fairness.
type namespaceStoreHidden struct{}

func (namespaceStoreHidden) DeleteCollection()           {}
func (namespaceStoreHidden) PruneUnknownFields()         {}
func (namespaceStoreHidden) Structure()                  {}
func (namespaceStoreHidden) StorageReadiness()           {}
func (namespaceStoreHidden) Stats()                      {}
func (namespaceStoreHidden) Categories()                 {}
func (namespaceStoreHidden) SelectableFields()           {}
func (namespaceStoreHidden) DeleteReturnsDeletedObject() {}
func (namespaceStoreHidden) Mutate()                     {}

var (
	_ rest.Getter               = (*NamespaceREST)(nil)
	_ rest.Lister               = (*NamespaceREST)(nil)
	_ rest.Watcher              = (*NamespaceREST)(nil)
	_ rest.Creater              = (*NamespaceREST)(nil)
	_ rest.Updater              = (*NamespaceREST)(nil)
	_ rest.GracefulDeleter      = (*NamespaceREST)(nil)
	_ rest.TableConvertor       = (*NamespaceREST)(nil)
	_ rest.ShortNamesProvider   = (*NamespaceREST)(nil)
	_ rest.SingularNameProvider = (*NamespaceREST)(nil)
)

// namespacesResource names namespaces in errors.
var namespacesResource = corev1.Resource("namespaces")

// namespaceDeclaration is the namespaces' declaration, which serves its
// Store through NamespaceREST and adds namespaces/finalize; once it is
// installed, served and finalize are what it serves, for the namespace
// controller.
type namespaceDeclaration struct {
	generic.Resource
	served   *NamespaceREST
	finalize rest.Updater
}

func newNamespaces(defaults namespaceDefaults) *namespaceDeclaration {
	d := &namespaceDeclaration{Resource: namespaces}
	d.Serve = func(store *generic.Store) rest.Storage {
		d.served = &NamespaceREST{Store: store, defaults: defaults}
		return d.served
	}
	d.Subresources = map[string]generic.SubresourceFunc{
		"namespaces/finalize": func(store *generic.Store) (rest.Storage, error) {
			finalize := &namespaceFinalizeREST{status: generic.NewStatusREST(store, namespaceFinalizeStrategy{})}
			d.finalize = finalize
			return finalize, nil
		},
	}
	return d
}

// Create implements rest.Creater. A new namespace gets what kube's
// controllers give it (see namespaceDefaults).
func (r *NamespaceREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return r.CreateMutating(ctx, obj, nil, createValidation, options)
}

// CreateMutating implements rest.MutatingCreater (its Store runs
// the mutation).
func (r *NamespaceREST) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	out, err := r.Store.CreateMutating(ctx, obj, mutate, createValidation, options)
	if err == nil && len(options.DryRun) == 0 {
		r.defaults.ensure(ctx, out.(*corev1.Namespace).Name)
	}
	return out, err
}

// Update implements rest.Updater (an apply may create the namespace).
func (r *NamespaceREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := r.Store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
	if err == nil && created && len(options.DryRun) == 0 {
		r.defaults.ensure(ctx, name)
	}
	return out, created, err
}

// namespaceFinalizeREST serves namespaces/finalize. kube offers only PUT
// there: no get, no patch.
type namespaceFinalizeREST struct {
	status *generic.StatusREST
}

var _ rest.Updater = (*namespaceFinalizeREST)(nil)

// New implements rest.Storage.
func (r *namespaceFinalizeREST) New() runtime.Object { return &corev1.Namespace{} }

// Destroy implements rest.Storage: the storage is the namespaces'.
func (r *namespaceFinalizeREST) Destroy() {}

// Default implements rest.Defaulter.
func (r *namespaceFinalizeREST) Default(obj runtime.Object) { r.status.Default(obj) }

// GetResetFields implements rest.ResetFieldsStrategy.
func (r *namespaceFinalizeREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.status.GetResetFields()
}

// Update implements rest.Updater.
func (r *namespaceFinalizeREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.status.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// Delete implements rest.GracefulDeleter.
func (r *NamespaceREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if p := options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != ns.UID {
			return nil, false, apierrors.NewConflict(namespacesResource, name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
			return nil, false, apierrors.NewConflict(namespacesResource, name,
				fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ns.ResourceVersion))
		}
	}
	if ns.DeletionTimestamp.IsZero() {
		return r.startTermination(ctx, ns, deleteValidation, options)
	}
	if len(ns.Spec.Finalizers) != 0 {
		return ns, false, nil
	}
	return r.Store.Delete(ctx, name, deleteValidation, options)
}

// startTermination marks the namespace Terminating and records the
// propagation policy's finalizers. Like kube, it writes without the
// update strategy (Store.Mutate): setting a deletionTimestamp is no update
// a client may make, and metadata validation would refuse it.
func (r *NamespaceREST) startTermination(ctx context.Context, ns *corev1.Namespace, deleteValidation rest.ValidateObjectFunc,
	options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	uid := ns.UID
	preconditions := &metav1.Preconditions{UID: &uid}
	if p := options.Preconditions; p != nil {
		preconditions.ResourceVersion = p.ResourceVersion
	}
	out, err := r.Store.Mutate(ctx, ns.Name, preconditions, func(existing runtime.Object) error {
		cur := existing.(*corev1.Namespace)
		if deleteValidation != nil {
			if err := deleteValidation(ctx, cur); err != nil {
				return err
			}
		}
		if cur.DeletionTimestamp.IsZero() {
			now := metav1.Now()
			cur.DeletionTimestamp = &now
		}
		cur.Status.Phase = corev1.NamespaceTerminating
		cur.Finalizers = namespaceGCFinalizers(cur.Finalizers, options)
		return nil
	}, len(options.DryRun) > 0)
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// namespaceGCFinalizers adds or removes the orphan and foregroundDeletion
// finalizers as the delete options ask.
func namespaceGCFinalizers(current []string, options *metav1.DeleteOptions) []string {
	orphan := slices.Contains(current, metav1.FinalizerOrphanDependents)
	foreground := slices.Contains(current, metav1.FinalizerDeleteDependents)
	if options.OrphanDependents != nil { //nolint:staticcheck // still honoured, as kube does
		orphan = *options.OrphanDependents //nolint:staticcheck
	}
	if p := options.PropagationPolicy; p != nil {
		orphan = *p == metav1.DeletePropagationOrphan
		foreground = *p == metav1.DeletePropagationForeground
	}
	out := slices.DeleteFunc(slices.Clone(current), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	return out
}

// HostsMutation implements rest.MutationHost (its Store runs it).
func (r *namespaceFinalizeREST) HostsMutation() bool { return true }
