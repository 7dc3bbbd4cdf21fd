package core

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// NamespaceNameLabel is the label every namespace carries with its own
// name, so that selectors can pick namespaces by name.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

var namespaces = generic.Resource{
	Name: "namespaces", Singular: "namespace", Kind: "Namespace",
	ShortNames:     []string{"ns"},
	New:            func() runtime.Object { return &corev1.Namespace{} },
	NewList:        func() runtime.Object { return &corev1.NamespaceList{} },
	Strategy:       namespaceStrategy{},
	StatusStrategy: namespaceStatusStrategy{},
	AttrFunc:       namespaceAttrs,
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Status", Type: "string", Description: "The status of the namespace"},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			ns := obj.(*corev1.Namespace)
			return []interface{}{ns.Name, string(ns.Status.Phase), generic.TranslateTimestampSince(ns.CreationTimestamp)}, nil
		},
	},
}

func namespaceAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, nil, fmt.Errorf("not a namespace: %T", obj)
	}
	fields := generic.ObjectMetaFieldsSet(&ns.ObjectMeta, false)
	fields["status.phase"] = string(ns.Status.Phase)
	return ns.Labels, fields, nil
}

type namespaceStrategy struct{ generic.BaseStrategy }

// Default keeps the name label of a namespace in place, on create and on
// every update.
func (namespaceStrategy) Default(obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[NamespaceNameLabel] = ns.Name
}

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
	ns.Status = oldNS.Status
}

func (namespaceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	return apivalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
}

func (namespaceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	return apivalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &oldNS.ObjectMeta, field.NewPath("metadata"))
}

type namespaceStatusStrategy struct{ namespaceStrategy }

func (namespaceStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec = oldNS.Spec
}

// namespaceFinalizeStrategy serves /finalize: only spec.finalizers change.
type namespaceFinalizeStrategy struct{ namespaceStrategy }

func (namespaceFinalizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Status = oldNS.Status
}

// NamespaceREST serves namespaces. Deleting a namespace first marks it
// Terminating; it goes away once its spec.finalizers are empty (the
// namespace controller empties it, then finalizes it).
type NamespaceREST struct {
	*generic.Store
}

func installNamespaces(getter generic.RESTOptionsGetter, resources map[string]rest.Storage) error {
	store, err := namespaces.Install(SchemeGroupVersion, getter, resources)
	if err != nil {
		return err
	}
	resources["namespaces"] = &NamespaceREST{Store: store}
	resources["namespaces/finalize"] = generic.NewStatusREST(store, namespaceFinalizeStrategy{})
	return nil
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
			return nil, false, apierrors.NewConflict(r.DefaultQualifiedResource, name,
				fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
			return nil, false, apierrors.NewConflict(r.DefaultQualifiedResource, name,
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
// propagation policy's finalizers.
func (r *NamespaceREST) startTermination(ctx context.Context, ns *corev1.Namespace, deleteValidation rest.ValidateObjectFunc,
	options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	uid := ns.UID
	info := &rest.DefaultUpdatedObjectInfo{Obj: ns}
	info.Transformers = append(info.Transformers, func(ctx context.Context, _, current runtime.Object) (runtime.Object, error) {
		cur := current.DeepCopyObject().(*corev1.Namespace)
		if cur.UID != uid {
			return nil, apierrors.NewConflict(r.DefaultQualifiedResource, cur.Name, errors.New("the namespace was deleted and created again"))
		}
		if deleteValidation != nil {
			if err := deleteValidation(ctx, cur); err != nil {
				return nil, err
			}
		}
		if cur.DeletionTimestamp.IsZero() {
			now := metav1.Now()
			cur.DeletionTimestamp = &now
		}
		cur.Status.Phase = corev1.NamespaceTerminating
		cur.Finalizers = namespaceGCFinalizers(cur.Finalizers, options)
		return cur, nil
	})
	out, _, err := generic.NewStatusREST(r.Store, namespaceTerminateStrategy{}).Update(ctx, ns.Name, info, nil, nil, false,
		&metav1.UpdateOptions{DryRun: options.DryRun})
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

// namespaceTerminateStrategy lets startTermination set phase and deletion
// timestamp, which no client endpoint may.
type namespaceTerminateStrategy struct{ namespaceStrategy }

func (namespaceTerminateStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

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
