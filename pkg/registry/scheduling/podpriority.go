package scheduling

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PriorityClassReader reads priority classes: the priorityclasses
// storage.
type PriorityClassReader interface {
	rest.Getter
	rest.Lister
}

// PodPriority is the mutating half of kube's Priority admission plugin: a
// new pod's priority and preemption policy come from its priority class,
// or from the globalDefault class when it names none (0 and
// PreemptLowerPriority when there is none).
type PodPriority struct {
	Classes PriorityClassReader
}

// Admit sets a new pod's priority, name of the default class, and
// preemption policy; a missing class, or a priority or policy the pod
// sets that its class disagrees with, is refused (403) in kube's words.
// name is the pod's name as kube's admission sees it.
func (p PodPriority) Admit(ctx context.Context, pod *corev1.Pod, name string) error {
	className, priority, policy, err := p.resolve(ctx, pod.Spec.PriorityClassName, name)
	if err != nil {
		return err
	}
	pod.Spec.PriorityClassName = className
	if pod.Spec.Priority != nil && *pod.Spec.Priority != priority {
		return forbidden(name, fmt.Errorf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *pod.Spec.Priority, priority))
	}
	pod.Spec.Priority = &priority
	if policy != nil {
		if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy != *policy {
			return forbidden(name, fmt.Errorf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *pod.Spec.PreemptionPolicy, *policy))
		}
		pod.Spec.PreemptionPolicy = policy
	}
	return nil
}

// resolve returns the class a pod gets, its priority and its policy.
func (p PodPriority) resolve(ctx context.Context, className, podName string) (string, int32, *corev1.PreemptionPolicy, error) {
	ctx = request.WithNamespace(ctx, "")
	if className == "" {
		classes, err := ListPriorityClasses(ctx, p.Classes)
		if err != nil {
			return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("error occurred while retrieving default priority class: %w", err))
		}
		if def := DefaultPriorityClass(classes); def != nil {
			return def.Name, def.Value, def.PreemptionPolicy, nil
		}
		lower := corev1.PreemptLowerPriority
		return "", 0, &lower, nil
	}
	obj, err := p.Classes.Get(ctx, className, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return "", 0, nil, forbidden(podName, fmt.Errorf("no PriorityClass with name %v was found", className))
	}
	if err != nil {
		return "", 0, nil, apierrors.NewInternalError(fmt.Errorf("failed to resolve PriorityClass with name %s: %w", className, err))
	}
	pc := obj.(*schedulingv1.PriorityClass)
	return className, pc.Value, pc.PreemptionPolicy, nil
}

// forbidden is kube's admission refusal of a pod.
func forbidden(podName string, err error) error {
	return apierrors.NewForbidden(corev1.Resource("pods"), podName, err)
}
