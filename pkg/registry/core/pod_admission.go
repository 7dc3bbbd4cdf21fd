package core

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// kube-apiserver's default admission plugins change every new pod. In
// kube's order: LimitRanger gives it its namespace's default resources,
// the ServiceAccount plugin names its service account and mounts the API
// credentials, Priority resolves its priority from its priority class,
// DefaultTolerationSeconds lets it survive a node problem for five
// minutes, and RuntimeClass adds its runtime class's overhead and
// scheduling. miniapiserver has no chain of built-in mutating plugins:
// the pods' AdmitCreate hook (admitNewPod) makes the same changes, before
// the mutating webhooks, as in kube. The steps that
// --disable-admission-plugins turns off (ServiceAccount, Priority,
// RuntimeClass, DefaultTolerationSeconds) are absent when off.

// DefaultTolerationSeconds is kube's admission plugin of that name: a pod
// that does not tolerate the NoExecute taints node.kubernetes.io/not-ready
// and unreachable gets tolerations of them, for NotReady and Unreachable
// seconds (kube's --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds), on create and on update (a
// client that replaces a pod with its manifest gets them back, as kube's
// validation of pod updates requires).
type DefaultTolerationSeconds struct {
	NotReady, Unreachable int64
}

// KubeDefaultTolerationSeconds are kube-apiserver's default flags: five
// minutes on a node with a problem.
var KubeDefaultTolerationSeconds = DefaultTolerationSeconds{NotReady: 300, Unreachable: 300}

// PodAdmitter is a step of kube's admission of new pods that reads other
// objects: ServiceAccount (service accounts), Priority (priority
// classes), RuntimeClass (runtime classes). name is the pod's name as
// kube's admission sees it (generic.RequestedName); an error is kube's
// Status.
type PodAdmitter interface {
	Admit(ctx context.Context, pod *corev1.Pod, name string) error
}

// admitNewPod is the pods' AdmitCreate hook: the admission steps that run
// before the mutating webhooks and the strategy see a new pod (and again
// once the webhooks changed it), in kube's order.
func admitNewPod(lookups podLookups) generic.AdmitCreateFunc {
	return func(ctx context.Context, obj runtime.Object) error {
		pod := obj.(*corev1.Pod)
		name := generic.RequestedName(pod)
		if lookups.limitRanges != nil {
			ranges, err := ListLimitRanges(ctx, lookups.limitRanges)
			if err != nil {
				return apierrors.NewForbidden(corev1.Resource("pods"), name,
					errors.New("unable to create pods at this time because there was an error enforcing limit ranges"))
			}
			applyLimitRangeDefaults(pod, ranges)
		}
		if err := admitWith(ctx, pod, name, lookups.serviceAccount, lookups.priority); err != nil {
			return err
		}
		if lookups.tolerations != nil {
			lookups.tolerations.Add(&pod.Spec)
		}
		if err := admitWith(ctx, pod, name, lookups.runtimeClass); err != nil {
			return err
		}
		if lookups.topology != nil {
			return lookups.topology.Admit(ctx, pod, name)
		}
		return nil
	}
}

// admitWith runs the steps that are on, in order; the first error wins.
func admitWith(ctx context.Context, pod *corev1.Pod, name string, steps ...PodAdmitter) error {
	for _, step := range steps {
		if step != nil {
			if err := step.Admit(ctx, pod, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// Add lets a pod stay on a node that turned not ready or unreachable,
// unless it tolerates those taints already (a toleration without key or
// effect counts, as in kube). Adding twice changes nothing.
func (d *DefaultTolerationSeconds) Add(spec *corev1.PodSpec) {
	notReady, unreachable := false, false
	for _, t := range spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		if (t.Key == corev1.TaintNodeNotReady || t.Key == "") && noExecute {
			notReady = true
		}
		if (t.Key == corev1.TaintNodeUnreachable || t.Key == "") && noExecute {
			unreachable = true
		}
	}
	for _, missing := range []struct {
		key     string
		add     bool
		seconds int64
	}{{corev1.TaintNodeNotReady, !notReady, d.NotReady}, {corev1.TaintNodeUnreachable, !unreachable, d.Unreachable}} {
		if missing.add {
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{
				Key: missing.key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
				TolerationSeconds: ptr.To(missing.seconds),
			})
		}
	}
}
