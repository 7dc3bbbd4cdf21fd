package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// LimitPodHardAntiAffinityTopology is kube's opt-in plugin of that name:
// a pod's required anti-affinity terms may only spread it by node
// (topologyKey kubernetes.io/hostname), so that no pod can keep a whole
// zone or region to itself. Checked on creates and updates (of pods
// whose affinity, immutable, was let in before the plugin was on, too).
type LimitPodHardAntiAffinityTopology struct{}

// Validate implements handlers.Admission.
func (LimitPodHardAntiAffinityTopology) Validate(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	pod, ok := admittedPod(a, obj, true)
	if !ok || pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return nil
	}
	for _, term := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != corev1.LabelHostname {
			return apierrors.NewForbidden(podsResource, pod.Name, fmt.Errorf(
				"affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey %v but only key %v is allowed",
				term.TopologyKey, corev1.LabelHostname))
		}
	}
	return nil
}
