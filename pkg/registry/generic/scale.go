package generic

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ScaleAccessor reads and writes the replicas of a scalable kind.
type ScaleAccessor struct {
	// Replicas returns spec.replicas, status.replicas and the label
	// selector of the pods (as a string).
	Replicas func(obj runtime.Object) (spec, status int32, selector string, err error)
	// SetReplicas sets spec.replicas.
	SetReplicas func(obj runtime.Object, replicas int32)
	// ReplicasPaths is where each API version of the kind keeps the
	// replicas, for the managed fields of a scale update (nil:
	// spec.replicas in the served version). Managers of API versions not
	// listed are dropped from the object's managed fields by a scale
	// update, as kube drops them.
	ReplicasPaths managedfields.ResourcePathMappings
}

// ScaleREST serves the "/scale" subresource (autoscaling/v1 Scale) of a
// resource: reading and setting its replicas through the main store, so
// that the main resource's strategy (generation, validation) applies.
type ScaleREST struct {
	store    *Store
	accessor ScaleAccessor
}

var (
	_ rest.Getter                   = (*ScaleREST)(nil)
	_ rest.Updater                  = (*ScaleREST)(nil)
	_ rest.GroupVersionKindProvider = (*ScaleREST)(nil)
)

// NewScaleREST returns the scale subresource of main.
func NewScaleREST(main *Store, accessor ScaleAccessor) *ScaleREST {
	return &ScaleREST{store: main, accessor: accessor}
}

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

// New implements rest.Storage.
func (r *ScaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy implements rest.Storage: the storage is the main resource's.
func (r *ScaleREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *ScaleREST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// GroupVersionKind implements rest.GroupVersionKindProvider.
func (r *ScaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind { return scaleGVK }

// Get implements rest.Getter.
func (r *ScaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.scaleOf(obj)
}

// Update implements rest.Updater: the Scale's resourceVersion, when set,
// must be the object's current one.
func (r *ScaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, _ rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := &scaleUpdatedObjectInfo{scale: r, name: name, inner: objInfo}
	obj, _, err := r.store.Update(ctx, name, info, nil, updateValidation, false, options)
	if err != nil {
		return nil, false, err
	}
	scale, err := r.scaleOf(obj)
	return scale, false, err
}

// replicasPaths is where the kind keeps its replicas, by API version.
func (r *ScaleREST) replicasPaths() managedfields.ResourcePathMappings {
	if r.accessor.ReplicasPaths != nil {
		return r.accessor.ReplicasPaths
	}
	return managedfields.ResourcePathMappings{
		r.store.kind.GroupVersion().String(): fieldpath.MakePathOrDie("spec", "replicas"),
	}
}

// subresource names the scale subresource as kube's errors do
// ("deployments/scale.apps").
func (r *ScaleREST) subresource() schema.GroupResource {
	gr := r.store.qualifiedResource
	gr.Resource += "/scale"
	return gr
}

func (r *ScaleREST) scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	spec, status, selector, err := r.accessor.Replicas(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{Kind: scaleGVK.Kind, APIVersion: scaleGVK.GroupVersion().String()},
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: spec},
		Status: autoscalingv1.ScaleStatus{Replicas: status, Selector: selector},
	}, nil
}

// scaleUpdatedObjectInfo turns an update of the Scale into an update of
// the object: it shows the inner info the current Scale, and writes the
// replicas of the Scale it returns into the object.
type scaleUpdatedObjectInfo struct {
	scale *ScaleREST
	name  string
	inner rest.UpdatedObjectInfo
}

func (i *scaleUpdatedObjectInfo) Preconditions() *metav1.Preconditions {
	return i.inner.Preconditions()
}

func (i *scaleUpdatedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	m, err := meta.Accessor(oldObj)
	if err != nil || m.GetResourceVersion() == "" {
		return nil, apierrors.NewNotFound(i.scale.store.qualifiedResource, i.name)
	}
	oldScale, err := i.scale.scaleOf(oldObj)
	if err != nil {
		return nil, err
	}
	// The Scale shows the managers of the replicas, as owners of its
	// spec.replicas; what the update makes of them goes back into the
	// object's managed fields.
	managed := managedfields.NewScaleHandler(m.GetManagedFields(), i.scale.store.kind.GroupVersion(), i.scale.replicasPaths())
	if oldScale.ManagedFields, err = managed.ToSubresource(); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj, err := i.inner.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected a Scale, got %T", obj))
	}
	if scale.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(scaleGVK.GroupKind(), scale.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0"),
		})
	}
	if scale.UID != "" && scale.UID != m.GetUID() {
		return nil, apierrors.NewConflict(i.scale.subresource(), i.name,
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", scale.UID, m.GetUID()))
	}
	if scale.ResourceVersion != "" && scale.ResourceVersion != m.GetResourceVersion() {
		return nil, apierrors.NewConflict(i.scale.store.qualifiedResource, i.name, fmt.Errorf(OptimisticLockErrorMsg))
	}
	entries, err := managed.ToParent(scale.ManagedFields)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	updated := oldObj.DeepCopyObject()
	i.scale.accessor.SetReplicas(updated, scale.Spec.Replicas)
	updatedMeta, err := meta.Accessor(updated)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	updatedMeta.SetManagedFields(entries)
	return updated, nil
}
