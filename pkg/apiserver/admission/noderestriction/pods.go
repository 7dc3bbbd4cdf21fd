package noderestriction

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
)

// admitPod: a node may create and delete its mirror pods, update the
// status of its pods and evict them; nothing else of pods.
func (p *Plugin) admitPod(ctx context.Context, r *nodeRequest) error {
	switch r.a.Subresource {
	case "":
		switch r.a.Operation {
		case handlers.Create:
			return p.admitMirrorPod(ctx, r)
		case handlers.Delete:
			pod, ok := r.obj.(*corev1.Pod)
			if !ok {
				return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
			}
			if pod.Spec.NodeName != r.node {
				return r.forbidden(fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", r.node))
			}
			return nil
		}
		return r.forbidden(fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", r.a.Operation, r.node))
	case "status":
		return admitPodStatus(r)
	case "eviction":
		return p.admitEviction(ctx, r)
	}
	return r.forbidden(fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", r.a.Subresource))
}

// admitMirrorPod: a node may only create mirror pods, bound to itself,
// controlled by its Node, that reference no other API object.
func (p *Plugin) admitMirrorPod(ctx context.Context, r *nodeRequest) error {
	pod, ok := r.obj.(*corev1.Pod)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return r.forbidden(fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, r.node))
	}
	if pod.Spec.NodeName != r.node {
		return r.forbidden(fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", r.node))
	}
	if err := p.checkMirrorOwner(ctx, r, pod); err != nil {
		return err
	}
	ref, err := podspec.APIObjectReference(&pod.Spec)
	if err != nil {
		return r.forbidden(fmt.Errorf("error checking mirror pod for API references: %w", err))
	}
	if ref != "" {
		return r.forbidden(fmt.Errorf("node %q can not create pods that reference %s", r.node, ref))
	}
	return nil
}

// checkMirrorOwner: a mirror pod's one owner is the node's Node, as its
// controller, not blocking its deletion, with the Node's UID.
func (p *Plugin) checkMirrorOwner(ctx context.Context, r *nodeRequest, pod *corev1.Pod) error {
	switch len(pod.OwnerReferences) {
	case 0:
		return r.forbidden(fmt.Errorf("node %q can only create pods with an owner reference set to itself", r.node))
	case 1:
	default:
		return r.forbidden(fmt.Errorf("node %q can only create pods with a single owner reference set to itself", r.node))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != r.node {
		return r.forbidden(fmt.Errorf("node %q can only create pods with an owner reference set to itself", r.node))
	}
	if owner.Controller == nil || !*owner.Controller {
		return r.forbidden(fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", r.node))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return r.forbidden(fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", r.node))
	}
	node, err := get[*corev1.Node](ctx, p.Nodes, "", r.node)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return r.forbidden(fmt.Errorf("error looking up node %s to verify uid: %v", r.node, err))
	}
	if owner.UID != node.UID {
		return r.forbidden(fmt.Errorf("node %s UID mismatch: expected %s got %s", r.node, owner.UID, node.UID))
	}
	return nil
}

// admitPodStatus: a node may update the status of its own pods, not
// their labels nor the resource claims the scheduler gave them.
func admitPodStatus(r *nodeRequest) error {
	if r.a.Operation != handlers.Update {
		return r.forbidden(fmt.Errorf("unexpected operation %q", r.a.Operation))
	}
	old, ok := r.a.Old.(*corev1.Pod)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.a.Old))
	}
	if old.Spec.NodeName != r.node {
		return r.forbidden(fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", r.node))
	}
	pod, ok := r.obj.(*corev1.Pod)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	switch {
	case !labels.Equals(old.Labels, pod.Labels):
		return r.forbidden(fmt.Errorf("node %q cannot update labels through pod status", r.node))
	case !resourceclaim.PodStatusEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses):
		return r.forbidden(fmt.Errorf("node %q cannot update resource claim statues", r.node))
	case !resourceclaim.PodExtendedStatusEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus):
		return r.forbidden(fmt.Errorf("node %q cannot update extended resource claim status", r.node))
	case !apiequality.Semantic.DeepEqual(old.Status.NodeAllocatableResourceClaimStatuses, pod.Status.NodeAllocatableResourceClaimStatuses):
		return r.forbidden(fmt.Errorf("node %q cannot update node allocatable resource claim statuses", r.node))
	}
	return nil
}

// admitEviction: a node may evict its own pods.
func (p *Plugin) admitEviction(ctx context.Context, r *nodeRequest) error {
	if r.a.Operation != handlers.Create {
		return r.forbidden(fmt.Errorf("unexpected operation %s", r.a.Operation))
	}
	eviction, ok := r.obj.(*policyv1.Eviction)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	name := r.a.Name // the URL's, rather than the Eviction's, as kube
	if name == "" {
		if eviction.Name == "" {
			return r.forbidden(fmt.Errorf("could not determine pod from request data"))
		}
		name = eviction.Name
	}
	pod, err := get[*corev1.Pod](ctx, p.Pods, r.a.Namespace, name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return r.forbidden(err)
	}
	if pod.Spec.NodeName != r.node {
		return r.forbidden(fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", r.node))
	}
	return nil
}
