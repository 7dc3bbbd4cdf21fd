package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/node"
)

// RuntimeClass refuses a new pod whose overhead is not its runtime
// class's, or that has an overhead without a class defining one, as the
// validating half of kube's plugin of that name does; the mutating half
// (the overhead and scheduling a class gives) is applied by the pods'
// storage.
type RuntimeClass struct {
	Pods node.PodRuntimeClass
}

// Validate implements handlers.Admission.
func (r *RuntimeClass) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != corev1.Resource("pods") || a.Subresource != "" || a.Operation != handlers.Create {
		return nil
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	return r.Pods.Validate(ctx, pod, generic.RequestedName(pod))
}
