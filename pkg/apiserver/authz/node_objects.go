package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/podspec"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// NodeObjects reads what relates objects to nodes, for the Node
// authorizer: the pods bound to a node and the objects that name a node
// themselves. Reads come from the watch cache (resourceVersion "0"), as
// kube's graph comes from informers: a change shows there a moment after
// it is written.
type NodeObjects interface {
	// PodsOn returns the pods whose spec.nodeName is node, in namespace
	// ("": in all).
	PodsOn(ctx context.Context, node, namespace string) ([]*corev1.Pod, error)
	// Get returns the object of the kind (a PersistentVolume,
	// PersistentVolumeClaim, VolumeAttachment, ResourceSlice or
	// PodCertificateRequest, as its served Go type); NotFound when there
	// is none.
	Get(ctx context.Context, k objectKind, namespace, name string) (runtime.Object, error)
}

// objectKind is a kind of object the Node authorizer relates to nodes
// (kube's vertex types).
type objectKind string

const (
	kindPod                   objectKind = "pod"
	kindSecret                objectKind = "secret"
	kindConfigMap             objectKind = "configmap"
	kindServiceAccount        objectKind = "serviceaccount"
	kindPVC                   objectKind = "pvc"
	kindPV                    objectKind = "pv"
	kindResourceClaim         objectKind = "resourceclaim"
	kindVolumeAttachment      objectKind = "volumeattachment"
	kindResourceSlice         objectKind = "resourceslice"
	kindPodCertificateRequest objectKind = "podcertificaterequest"
)

// relatedToNode reports whether the object is related to node, along the
// edges of kube's graph:
//
//	node <- pod <- secret, configmap, serviceaccount, pvc, resourceclaim
//	node <- pod <- pvc <- pv <- secret
//	node <- volumeattachment, resourceslice, podcertificaterequest
//
// A mirror pod relates to its node only: a node cannot grant itself
// anything with a pod it creates.
func relatedToNode(ctx context.Context, objs NodeObjects, node string, k objectKind, ns, name string) (bool, error) {
	switch k {
	case kindPod:
		pods, err := objs.PodsOn(ctx, node, ns)
		return slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return p.Name == name }), err
	case kindSecret:
		if ok, err := anyPodReferences(ctx, objs, node, ns, name, podspecSecrets); ok || err != nil {
			return ok, err
		}
		return volumeSecretOnNode(ctx, objs, node, ns, name)
	case kindConfigMap:
		return anyPodReferences(ctx, objs, node, ns, name, podspecConfigMaps)
	case kindServiceAccount:
		return anyPodReferences(ctx, objs, node, ns, name, func(p *corev1.Pod) []string { return []string{p.Spec.ServiceAccountName} })
	case kindPVC:
		return anyPodReferences(ctx, objs, node, ns, name, claimNames)
	case kindResourceClaim:
		return anyPodReferences(ctx, objs, node, ns, name, resourceClaimNames)
	case kindPV:
		pv, err := getAs[*corev1.PersistentVolume](ctx, objs, kindPV, "", name)
		if err != nil || pv.Spec.ClaimRef == nil {
			return false, err
		}
		return anyPodReferences(ctx, objs, node, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, claimNames)
	case kindVolumeAttachment:
		va, err := getAs[*storagev1.VolumeAttachment](ctx, objs, k, "", name)
		return err == nil && va.Spec.NodeName == node, err
	case kindResourceSlice:
		s, err := getAs[*resourcev1.ResourceSlice](ctx, objs, k, "", name)
		return err == nil && s.Spec.NodeName != nil && *s.Spec.NodeName == node, err
	case kindPodCertificateRequest:
		r, err := getAs[*certificatesv1.PodCertificateRequest](ctx, objs, k, ns, name)
		return err == nil && string(r.Spec.NodeName) == node, err
	}
	return false, fmt.Errorf("node authorizer: no relations of %s", k)
}

// anyPodReferences reports whether a pod of the node in ns, not a mirror
// pod, names name among refs(pod).
func anyPodReferences(ctx context.Context, objs NodeObjects, node, ns, name string, refs func(*corev1.Pod) []string) (bool, error) {
	pods, err := objs.PodsOn(ctx, node, ns)
	if err != nil {
		return false, err
	}
	for _, p := range pods {
		if !isMirrorPod(p) && slices.Contains(refs(p), name) {
			return true, nil
		}
	}
	return false, nil
}

// volumeSecretOnNode reports whether secret ns/name is one the kubelet
// needs for a persistent volume bound to a claim of a pod of the node
// (found from the claim's spec.volumeName, and bound back to it by the
// volume's claimRef).
func volumeSecretOnNode(ctx context.Context, objs NodeObjects, node, ns, name string) (bool, error) {
	pods, err := objs.PodsOn(ctx, node, "")
	if err != nil {
		return false, err
	}
	var errs []error
	for _, p := range pods {
		if isMirrorPod(p) {
			continue
		}
		for _, claim := range claimNames(p) {
			ok, err := claimVolumeHasSecret(ctx, objs, p.Namespace, claim, ns, name)
			if ok {
				return true, nil
			}
			errs = append(errs, err)
		}
	}
	return false, errors.Join(errs...)
}

func claimVolumeHasSecret(ctx context.Context, objs NodeObjects, claimNS, claim, ns, name string) (bool, error) {
	pvc, err := getAs[*corev1.PersistentVolumeClaim](ctx, objs, kindPVC, claimNS, claim)
	if err != nil || pvc.Spec.VolumeName == "" {
		return false, err
	}
	pv, err := getAs[*corev1.PersistentVolume](ctx, objs, kindPV, "", pvc.Spec.VolumeName)
	if err != nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Namespace != claimNS || pv.Spec.ClaimRef.Name != claim {
		return false, err
	}
	return slices.Contains(kubeletVolumeSecrets(pv), [2]string{ns, name}), nil
}

func isMirrorPod(p *corev1.Pod) bool {
	_, ok := p.Annotations[corev1.MirrorPodAnnotationKey]
	return ok
}

func podspecSecrets(p *corev1.Pod) []string    { return podspec.SecretNames(&p.Spec) }
func podspecConfigMaps(p *corev1.Pod) []string { return podspec.ConfigMapNames(&p.Spec) }

// claimNames are the claims of a pod's volumes: persistent volume claims
// and the claims of its ephemeral volumes.
func claimNames(p *corev1.Pod) []string {
	var names []string
	for i := range p.Spec.Volumes {
		v := &p.Spec.Volumes[i]
		switch {
		case v.PersistentVolumeClaim != nil:
			names = append(names, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			names = append(names, ephemeral.VolumeClaimName(p, v))
		}
	}
	return names
}

// resourceClaimNames are the ResourceClaims a pod uses, once created.
func resourceClaimNames(p *corev1.Pod) []string {
	var names []string
	for name := range resourceclaim.PodClaims(p) {
		names = append(names, name)
	}
	return names
}

func getAs[T runtime.Object](ctx context.Context, objs NodeObjects, k objectKind, ns, name string) (T, error) {
	var zero T
	obj, err := objs.Get(ctx, k, ns, name)
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("node authorizer: %s %s/%s is a %T", k, ns, name, obj)
	}
	return t, nil
}

// RegistryNodeObjects are NodeObjects read from the registry's stores
// (their watch cache).
type RegistryNodeObjects struct {
	Pods rest.Lister
	// PersistentVolumeClaims ... PodCertificateRequests read the objects
	// of those kinds.
	PersistentVolumeClaims, PersistentVolumes, VolumeAttachments, ResourceSlices, PodCertificateRequests rest.Getter
}

var _ NodeObjects = RegistryNodeObjects{}

// PodsOn implements NodeObjects.
func (r RegistryNodeObjects) PodsOn(ctx context.Context, node, namespace string) ([]*corev1.Pod, error) {
	if r.Pods == nil {
		return nil, errors.New("node authorizer: no store of pods")
	}
	res, err := r.Pods.List(request.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{
		ResourceVersion: "0", FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node),
	})
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(res.Items))
	for _, item := range res.Items {
		p := &corev1.Pod{}
		if err := item.Decode(p); err != nil {
			return nil, err
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// Get implements NodeObjects.
func (r RegistryNodeObjects) Get(ctx context.Context, k objectKind, namespace, name string) (runtime.Object, error) {
	var g rest.Getter
	switch k {
	case kindPVC:
		g = r.PersistentVolumeClaims
	case kindPV:
		g = r.PersistentVolumes
	case kindVolumeAttachment:
		g = r.VolumeAttachments
	case kindResourceSlice:
		g = r.ResourceSlices
	case kindPodCertificateRequest:
		g = r.PodCertificateRequests
	}
	if g == nil {
		return nil, fmt.Errorf("node authorizer: no store of %s", k)
	}
	return g.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
}
