package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// ServiceAccount is the validating half of kube's plugin of that name: a
// new pod, as the mutating webhooks left it, must name a service account
// that exists and use only the secrets it allows (mirror pods none), and
// so must the ephemeral containers an update of pods/ephemeralcontainers
// adds. The mutating half (the default account, the mounted credentials)
// is applied by the pods' storage.
type ServiceAccount struct {
	Pods core.PodServiceAccount
}

// Validate implements handlers.Admission.
func (s *ServiceAccount) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != corev1.Resource("pods") {
		return nil
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	switch {
	case a.Operation == handlers.Create && a.Subresource == "":
		// Named as the request names it (a generateName prefix, not the
		// name generated since): kube refuses such a pod when it runs
		// the mutating half again after a webhook changed the pod.
		return s.Pods.Validate(ctx, pod, generic.RequestedName(pod))
	case a.Operation == handlers.Update && a.Subresource == "ephemeralcontainers":
		return s.Pods.ValidateEphemeralContainers(ctx, pod, a.Name)
	}
	return nil
}
