package noderestriction

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// admitPodCertificateRequest: a node may only request certificates for a
// pod running on it (not a mirror pod), of the pod's service account, for
// a signer the pod mounts (or that the node is authorized for). An
// inconsistency the watch cache's lag may cause (a UID not seen yet) is a
// plain error, which a retry may pass, as kube's.
func (p *Plugin) admitPodCertificateRequest(ctx context.Context, r *nodeRequest) error {
	if r.a.Operation != handlers.Create {
		return r.forbidden(fmt.Errorf("unexpected operation %v", r.a.Operation))
	}
	if r.a.Subresource != "" {
		return r.forbidden(fmt.Errorf("unexpected subresource %v", r.a.Subresource))
	}
	req, ok := r.obj.(*certificatesv1.PodCertificateRequest)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	if string(req.Spec.NodeName) != r.node {
		return r.forbidden(fmt.Errorf("PodCertificateRequest.Spec.NodeName=%q, which is not the requesting node %q", req.Spec.NodeName, r.node))
	}
	node, err := get[*corev1.Node](ctx, p.Nodes, "", r.node)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.Spec.NodeName, err)
	}
	if err != nil {
		return r.forbidden(fmt.Errorf("while retrieving node %q named in the PodCertificateRequest: %w", req.Spec.NodeName, err))
	}
	podName := r.a.Namespace + "/" + req.Spec.PodName
	if node.UID != req.Spec.NodeUID {
		return fmt.Errorf("PodCertificateRequest for pod %q names node UID %q, inconsistent with the running node (%q)", podName, req.Spec.NodeUID, node.UID)
	}
	pod, err := p.pcrPod(ctx, r, req, podName)
	if err != nil {
		return err
	}
	return p.checkPCRServiceAccount(ctx, r, req, pod, podName)
}

// pcrPod is the pod a request names, which must run on the node.
func (p *Plugin) pcrPod(ctx context.Context, r *nodeRequest, req *certificatesv1.PodCertificateRequest, podName string) (*corev1.Pod, error) {
	pod, err := get[*corev1.Pod](ctx, p.Pods, r.a.Namespace, req.Spec.PodName)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", podName, err)
	}
	if err != nil {
		return nil, r.forbidden(fmt.Errorf("while retrieving pod %q named in the PodCertificateRequest: %w", podName, err))
	}
	if req.Spec.PodUID != pod.UID {
		return nil, fmt.Errorf("PodCertificateRequest for pod %q contains pod UID (%q) which differs from running pod %q", podName, req.Spec.PodUID, string(pod.UID))
	}
	if pod.Spec.NodeName != string(req.Spec.NodeName) {
		return nil, r.forbidden(fmt.Errorf("pod %q is not running on node %q named in the PodCertificateRequest", podName, req.Spec.NodeName))
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil, r.forbidden(fmt.Errorf("pod %q is a mirror pod", podName))
	}
	return pod, nil
}

// checkPCRServiceAccount: the request's service account is the pod's, and
// the pod mounts a certificate of the signer (or the node may request it).
func (p *Plugin) checkPCRServiceAccount(ctx context.Context, r *nodeRequest, req *certificatesv1.PodCertificateRequest, pod *corev1.Pod, podName string) error {
	if req.Spec.ServiceAccountName != pod.Spec.ServiceAccountName {
		return r.forbidden(fmt.Errorf("PodCertificateRequest for pod %q contains serviceAccountName (%q) that differs from running pod (%q)", podName, req.Spec.ServiceAccountName, pod.Spec.ServiceAccountName))
	}
	saName := r.a.Namespace + "/" + req.Spec.ServiceAccountName
	sa, err := get[*corev1.ServiceAccount](ctx, p.ServiceAccounts, r.a.Namespace, req.Spec.ServiceAccountName)
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", saName, err)
	}
	if err != nil {
		return r.forbidden(fmt.Errorf("while retrieving service account %q named in the PodCertificateRequest: %w", saName, err))
	}
	if req.Spec.ServiceAccountUID != sa.UID {
		return fmt.Errorf("PodCertificateRequest for pod %q names service account UID %q, which differs from the running service account (%q)", podName, req.Spec.ServiceAccountUID, sa.UID)
	}
	if podMountsSigner(pod, req.Spec.SignerName) {
		return nil
	}
	// RBAC cannot match a resource with slashes: kube writes the signer
	// as it names ClusterTrustBundles.
	attrs := r.authorizerAttributes("request-serviceaccounts-podcertificate-signer",
		strings.ReplaceAll(req.Spec.SignerName, "/", ":"), req.Spec.ServiceAccountName)
	decision, _, err := p.Authorizer.Authorize(ctx, attrs)
	switch {
	case decision == authorizer.DecisionAllow:
		return nil
	case err != nil:
		return r.forbidden(fmt.Errorf("error authorizing %s to request podcertificaterequests for signer %q: %w", r.user.GetName(), req.Spec.SignerName, err))
	}
	return r.forbidden(fmt.Errorf("pod %q does not mount a podCertificate projected volume for signer %q", podName, req.Spec.SignerName))
}

func podMountsSigner(pod *corev1.Pod, signer string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.PodCertificate != nil && s.PodCertificate.SignerName == signer {
				return true
			}
		}
	}
	return false
}
