package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/resource"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// The causes of PodResizeValidator's refusals, as kube names them.
const (
	ReasonNodeCapacity        metav1.CauseType = "NodeCapacity"
	ReasonUnsupportedPlatform metav1.CauseType = "UnsupportedPlatform"
)

// PodResizeValidator is kube's plugin of that name: an in-place resize
// (pods/resize) of a pod on a node is refused when the node is not a
// Linux node, or when the pod's new requests exceed the node's
// allocatable CPU or memory.
type PodResizeValidator struct {
	// Nodes reads nodes (from the watch cache, as kube's plugin reads its
	// informer).
	Nodes rest.Getter
}

// Validate implements handlers.Admission.
func (p *PodResizeValidator) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Subresource != "resize" {
		return nil
	}
	_, pod, err := boundPodSpecUpdate(a, obj)
	if err != nil || pod == nil {
		return err
	}
	node, err := podNode(ctx, a, p.Nodes, pod)
	if err != nil {
		return err
	}
	// The OS label is always set by kubelets; a node without it passes.
	if os, ok := node.Labels[corev1.LabelOSStable]; ok && os != "linux" {
		return resizeRefusal(a, fmt.Errorf("pod resize is only supported on linux nodes, node %q is %q", node.Name, os), ReasonUnsupportedPlatform)
	}
	if err := requestsWithinAllocatable(pod, node.Status.Allocatable); err != nil {
		return resizeRefusal(a, err, ReasonNodeCapacity)
	}
	return nil
}

// requestsWithinAllocatable refuses requests of more CPU or memory than
// allocatable, with kube's message.
func requestsWithinAllocatable(pod *corev1.Pod, allocatable corev1.ResourceList) error {
	cpu, mem := allocatable.Cpu(), allocatable.Memory()
	requests := resource.PodRequests(pod, resource.PodResourcesOptions{})
	cpuRequests, memRequests := requests[corev1.ResourceCPU], requests[corev1.ResourceMemory]
	var msg []string
	if cpuRequests.Cmp(*cpu) > 0 {
		msg = append(msg, fmt.Sprintf("cpu, requested: %d, allocatable: %d", cpuRequests.MilliValue(), cpu.MilliValue()))
	}
	if memRequests.Cmp(*mem) > 0 {
		msg = append(msg, fmt.Sprintf("memory, requested: %d, allocatable: %d", memRequests.Value(), mem.Value()))
	}
	if len(msg) > 0 {
		return fmt.Errorf("node didn't have enough allocatable resources: %s", strings.Join(msg, "; "))
	}
	return nil
}

// resizeRefusal is a 403 whose details carry the cause.
func resizeRefusal(a handlers.Attributes, err error, reason metav1.CauseType) error {
	refusal := forbidden(a, err)
	var status *apierrors.StatusError
	if errors.As(refusal, &status) && status.ErrStatus.Details != nil {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: reason})
	}
	return refusal
}

// podNode reads the node pod is bound to, from the watch cache; failing
// that, it returns the request's refusal.
func podNode(ctx context.Context, a handlers.Attributes, nodes rest.Getter, pod *corev1.Pod) (*corev1.Node, error) {
	nodeObj, err := nodes.Get(request.WithNamespace(ctx, ""), pod.Spec.NodeName, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return nil, forbidden(a, fmt.Errorf("node %q not found", pod.Spec.NodeName))
	}
	if err != nil {
		return nil, forbidden(a, fmt.Errorf("failed to get node %q: %w", pod.Spec.NodeName, err))
	}
	node, ok := nodeObj.(*corev1.Node)
	if !ok {
		return nil, forbidden(a, fmt.Errorf("failed to get node %q: read as %T", pod.Spec.NodeName, nodeObj))
	}
	return node, nil
}

// boundPodSpecUpdate returns the old and new pod of an update of a pod
// bound to a node (the pod itself or a subresource of it) whose spec
// changed, and nils for any other request. The generation moves with the
// spec: an update that keeps it changes nothing these plugins check.
func boundPodSpecUpdate(a handlers.Attributes, obj runtime.Object) (old, pod *corev1.Pod, err error) {
	if a.Operation != handlers.Update || a.Resource.GroupResource() != corev1.Resource("pods") {
		return nil, nil, nil
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", obj))
	}
	if pod.Spec.NodeName == "" {
		return nil, nil, nil
	}
	old, ok = a.Old.(*corev1.Pod)
	if !ok {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.Old))
	}
	if old.Generation == pod.Generation {
		return nil, nil, nil
	}
	return old, pod, nil
}
