package node

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// PodRuntimeClass is kube's RuntimeClass admission plugin for new pods:
// Admit (its mutating half) gives a pod its class's overhead and merges
// the class's scheduling constraints into it; Validate (its validating
// half) refuses a pod whose overhead is not its class's.
type PodRuntimeClass struct {
	// Classes reads runtime classes: the runtimeclasses storage.
	Classes rest.Getter
}

var (
	errOverheadMismatch = errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
	errOverheadNoClass  = errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
)

// Admit sets the pod's overhead from its class (refusing a different one
// the pod sets) and adds the class's node selector (refusing a conflict)
// and tolerations. name is the pod's name as kube's admission sees it.
func (r PodRuntimeClass) Admit(ctx context.Context, pod *corev1.Pod, name string) error {
	rc, err := r.class(ctx, pod, name)
	if err != nil || rc == nil {
		return err
	}
	if rc.Overhead != nil {
		if len(pod.Spec.Overhead) > 0 && !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return forbidden(name, errOverheadMismatch)
		}
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		if pod.Spec.NodeSelector == nil && len(s.NodeSelector) > 0 {
			pod.Spec.NodeSelector = map[string]string{}
		}
		for key, value := range s.NodeSelector {
			if podValue, ok := pod.Spec.NodeSelector[key]; ok && podValue != value {
				return forbidden(name, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, value, key, podValue))
			}
			pod.Spec.NodeSelector[key] = value
		}
		pod.Spec.Tolerations = mergeTolerations(pod.Spec.Tolerations, s.Tolerations)
	}
	return nil
}

// Validate refuses a pod whose overhead is not its class's, or that has
// an overhead and no class with one.
func (r PodRuntimeClass) Validate(ctx context.Context, pod *corev1.Pod, name string) error {
	rc, err := r.class(ctx, pod, name)
	if err != nil {
		return err
	}
	if rc != nil && rc.Overhead != nil {
		if !apiequality.Semantic.DeepEqual(rc.Overhead.PodFixed, pod.Spec.Overhead) {
			return forbidden(name, errOverheadMismatch)
		}
	} else if pod.Spec.Overhead != nil {
		return forbidden(name, errOverheadNoClass)
	}
	return nil
}

// class returns the pod's runtime class, nil when it names none.
func (r PodRuntimeClass) class(ctx context.Context, pod *corev1.Pod, name string) (*nodev1.RuntimeClass, error) {
	if pod.Spec.RuntimeClassName == nil {
		return nil, nil
	}
	obj, err := r.Classes.Get(request.WithNamespace(ctx, ""), *pod.Spec.RuntimeClassName, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return nil, forbidden(name, fmt.Errorf("pod rejected: RuntimeClass %q not found", *pod.Spec.RuntimeClassName))
	}
	if err != nil {
		return nil, err
	}
	return obj.(*nodev1.RuntimeClass), nil
}

// forbidden is kube's admission refusal of a pod.
func forbidden(podName string, err error) error {
	return apierrors.NewForbidden(corev1.Resource("pods"), podName, err)
}

// mergeTolerations is kube's merge of a pod's tolerations with its
// class's: in order, without those another one tolerates a superset of
// (the first of two equal ones stays).
func mergeTolerations(first, second []corev1.Toleration) []corev1.Toleration {
	all := append(append([]corev1.Toleration{}, first...), second...)
	var merged []corev1.Toleration
next:
	for i, t := range all {
		for _, m := range merged {
			if tolerationSuperset(m, t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !apiequality.Semantic.DeepEqual(t, later) && tolerationSuperset(later, t) {
				continue next
			}
		}
		merged = append(merged, t)
	}
	return merged
}

// tolerationSuperset reports whether ss tolerates every taint t does.
func tolerationSuperset(ss, t corev1.Toleration) bool {
	if apiequality.Semantic.DeepEqual(t, ss) {
		return true
	}
	if t.Key != ss.Key && (ss.Key != "" || ss.Operator != corev1.TolerationOpExists) {
		return false
	}
	if t.Effect != ss.Effect && ss.Effect != "" {
		return false
	}
	if ss.Effect == corev1.TaintEffectNoExecute && ss.TolerationSeconds != nil &&
		(t.TolerationSeconds == nil || *t.TolerationSeconds > *ss.TolerationSeconds) {
		return false
	}
	switch ss.Operator {
	case corev1.TolerationOpEqual, "":
		return t.Operator == corev1.TolerationOpEqual && t.Value == ss.Value
	case corev1.TolerationOpExists:
		return true
	}
	return false
}
