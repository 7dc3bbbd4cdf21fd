package admission

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// ExtendedResourceToleration is kube's opt-in plugin of that name: a pod
// that requests an extended resource (example.com/gpu) tolerates the
// NoSchedule taint of that name, which is how clusters keep other pods
// off the nodes that have such devices. On creates and updates; only
// regular and init containers' requests count.
type ExtendedResourceToleration struct {
	// NodeProblems is as PodTolerationRestriction's: kube's
	// DefaultTolerationSeconds runs before, and adds its tolerations to
	// updated pods here first.
	NodeProblems *core.DefaultTolerationSeconds
}

// Validate implements handlers.Admission: the plugin only mutates.
func (ExtendedResourceToleration) Validate(context.Context, handlers.Attributes, runtime.Object) error {
	return nil
}

// Admit implements handlers.MutatingAdmission.
func (e ExtendedResourceToleration) Admit(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, true)
	if !ok {
		return nil
	}
	if e.NodeProblems != nil {
		e.NodeProblems.Add(&pod.Spec)
	}
	var names []string
	for _, containers := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for _, c := range containers {
			for name := range c.Resources.Requests {
				if validation.IsExtendedResourceName(name) && !slices.Contains(names, string(name)) {
					names = append(names, string(name))
				}
			}
		}
	}
	slices.Sort(names) // kube adds them in order of name
	for _, name := range names {
		setToleration(&pod.Spec, corev1.Toleration{
			Key: name, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule,
		})
	}
	return nil
}

// setToleration puts t in place of every toleration of the same key,
// effect, operator and value (whatever its tolerationSeconds), or
// appends it when there is none.
func setToleration(spec *corev1.PodSpec, t corev1.Toleration) {
	var out []corev1.Toleration
	replaced := false
	for _, have := range spec.Tolerations {
		if !t.MatchToleration(&have) {
			out = append(out, have)
			continue
		}
		out = append(out, t)
		replaced = true
	}
	if !replaced {
		out = append(out, t)
	}
	spec.Tolerations = out
}
