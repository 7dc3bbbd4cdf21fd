package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// BindingREST serves pods/binding: a scheduler POSTs a Binding to assign a
// pod to a node. The pod must not be assigned yet; it gets the node name,
// the binding's annotations and labels, and the PodScheduled condition.
type BindingREST struct {
	storeless[corev1.Binding, *corev1.Binding]
	store *generic.Store
	// topology, when set, gives bindings their node's topology labels
	// (kube's PodTopologyLabels, which admits pods/binding only, not the
	// legacy bindings resource).
	topology *PodTopologyLabels
}

var (
	_ rest.Creater = (*BindingREST)(nil)
	_ rest.Scoper  = (*BindingREST)(nil)
)

// Create implements rest.Creater. The pod is the one the URL names, which
// must also be the binding's name.
func (r *BindingREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	name := ""
	if info, ok := request.InfoFrom(ctx); ok {
		name = info.Name
	}
	if b, ok := obj.(*corev1.Binding); ok && r.topology != nil {
		if err := r.topology.admitBinding(ctx, b); err != nil {
			return nil, err
		}
	}
	return r.bind(ctx, name, obj, createValidation, options)
}

func (r *BindingREST) bind(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	binding, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	if name != binding.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if errs := validateBinding(binding); len(errs) != 0 {
		// kube answers this with a bare 500 carrying the messages.
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: errs.ToAggregate().Error(),
		}}
	}
	if createValidation != nil {
		if err := createValidation(ctx, binding.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := r.assign(ctx, binding, len(options.DryRun) > 0); err != nil {
		return nil, err
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Code:     http.StatusCreated,
	}, nil
}

func validateBinding(b *corev1.Binding) field.ErrorList {
	var allErrs field.ErrorList
	target := field.NewPath("target")
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		allErrs = append(allErrs, field.NotSupported(target.Child("kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		allErrs = append(allErrs, field.Required(target.Child("name"), ""))
	} else if b.Target.Kind == "" || b.Target.Kind == "Node" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(b.Target.Name, false) {
			allErrs = append(allErrs, field.Invalid(target.Child("name"), b.Target.Name, msg))
		}
	}
	return allErrs
}

// notBindableError is why a pod cannot be bound: a 409 on pods/binding,
// as in kube.
type notBindableError struct{ msg string }

func (e *notBindableError) Error() string { return e.msg }

func notBindable(format string, args ...any) error {
	return &notBindableError{msg: fmt.Sprintf(format, args...)}
}

// assign binds the pod, with the binding's UID and resourceVersion (when
// set) as preconditions.
func (r *BindingREST) assign(ctx context.Context, b *corev1.Binding, dryRun bool) error {
	var pre *metav1.Preconditions
	if b.UID != "" || b.ResourceVersion != "" {
		pre = &metav1.Preconditions{}
		if b.UID != "" {
			pre.UID = &b.UID
		}
		if b.ResourceVersion != "" {
			pre.ResourceVersion = &b.ResourceVersion
		}
	}
	_, err := r.store.Mutate(ctx, b.Name, pre, func(obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		switch {
		case pod.DeletionTimestamp != nil:
			return notBindable("pod %s is being deleted, cannot be assigned to a host", pod.Name)
		case pod.Spec.NodeName != "":
			return notBindable("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName)
		case len(pod.Spec.SchedulingGates) != 0:
			return notBindable("pod %v has non-empty .spec.schedulingGates", pod.Name)
		}
		pod.Spec.NodeName = b.Target.Name
		pod.Status.NominatedNodeName = ""
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		for k, v := range b.Annotations {
			pod.Annotations[k] = v
		}
		if len(b.Labels) > 0 && pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		for k, v := range b.Labels {
			pod.Labels[k] = v
		}
		setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
		return nil
	}, dryRun)
	if nb := (*notBindableError)(nil); errors.As(err, &nb) {
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, b.Name, nb)
	}
	return err
}

// setPodCondition adds or updates a condition, moving its transition time
// only when its status changes.
func setPodCondition(status *corev1.PodStatus, c corev1.PodCondition) {
	now := metav1.Now()
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status != c.Status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		old.LastProbeTime = c.LastProbeTime
		return
	}
	c.LastTransitionTime = now
	status.Conditions = append(status.Conditions, c)
}

// LegacyBindingREST serves the bindings resource (POST
// /api/v1/namespaces/NS/bindings): the older way to bind, naming the pod
// in the Binding only.
type LegacyBindingREST struct {
	storeless[corev1.Binding, *corev1.Binding]
	binding *BindingREST
}

var (
	_ rest.Creater              = (*LegacyBindingREST)(nil)
	_ rest.SingularNameProvider = (*LegacyBindingREST)(nil)
)

// GetSingularName implements rest.SingularNameProvider.
func (r *LegacyBindingREST) GetSingularName() string { return "binding" }

// Create implements rest.Creater.
func (r *LegacyBindingREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	binding, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding object: %T", obj))
	}
	return r.binding.bind(ctx, binding.Name, obj, createValidation, options)
}
