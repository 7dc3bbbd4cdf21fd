package noderestriction

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// admitServiceAccount: a node may only request tokens bound to a pod
// bound to it, for an audience the pod uses (a projected token or a CSI
// driver's), unless authorized for that audience.
func (p *Plugin) admitServiceAccount(ctx context.Context, r *nodeRequest) error {
	if r.a.Operation != handlers.Create || r.a.Subresource != "token" {
		return nil
	}
	tr, ok := r.obj.(*authenticationv1.TokenRequest)
	if !ok {
		return r.forbidden(fmt.Errorf("unexpected type %T", r.obj))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return r.forbidden(fmt.Errorf("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return r.forbidden(fmt.Errorf("node requested token with a pod binding without a uid"))
	}
	pod, err := get[*corev1.Pod](ctx, p.Pods, r.a.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return r.forbidden(err)
	}
	if ref.UID != pod.UID {
		return r.forbidden(fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != r.node {
		return r.forbidden(fmt.Errorf("node requested token bound to a pod scheduled on a different node"))
	}
	if err := p.checkAudience(ctx, r, tr, pod); err != nil {
		return r.forbidden(err)
	}
	return nil
}

// checkAudience is kube's ServiceAccountNodeAudienceRestriction (on in
// 1.37): the one audience requested ("" for the API server's) must be one
// the pod mounts, or the node authorized for it.
func (p *Plugin) checkAudience(ctx context.Context, r *nodeRequest, tr *authenticationv1.TokenRequest, pod *corev1.Pod) error {
	audience := ""
	switch len(tr.Spec.Audiences) {
	case 0:
	case 1:
		audience = tr.Spec.Audiences[0]
	default:
		return fmt.Errorf("node may only request 0 or 1 audiences")
	}
	found, err := p.podUsesAudience(ctx, pod, audience)
	if err != nil {
		return fmt.Errorf("error validating audience %q: %w", audience, err)
	}
	if found {
		return nil
	}
	attrs := r.authorizerAttributes("request-serviceaccounts-token-audience", audience, r.a.Name)
	decision, _, err := p.Authorizer.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error authorizing %s to request tokens for audience %q: %w", r.user.GetName(), audience, err)
	}
	return fmt.Errorf("%s is not authorized to request tokens for audience %q", r.user.GetName(), audience)
}

// podUsesAudience reports whether a projected token volume of the pod, or
// the CSI driver of one of its volumes (inline, or the volume bound to
// its claim), requests audience. In-tree volumes that kube translates to
// CSI are not translated here: their drivers' audiences need the node
// authorized for them.
func (p *Plugin) podUsesAudience(ctx context.Context, pod *corev1.Pod, audience string) (bool, error) {
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil && s.ServiceAccountToken.Audience == audience {
					return true, nil
				}
			}
		}
		var driver string
		var err error
		switch {
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			driver, err = p.claimCSIDriver(ctx, pod.Namespace, ephemeral.VolumeClaimName(pod, v))
		case v.PersistentVolumeClaim != nil:
			driver, err = p.claimCSIDriver(ctx, pod.Namespace, v.PersistentVolumeClaim.ClaimName)
		case v.CSI != nil:
			driver = v.CSI.Driver
		}
		if err == nil && driver != "" {
			var found bool
			if found, err = p.driverHasAudience(ctx, driver, audience); found {
				return true, nil
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return false, utilerrors.NewAggregate(errs)
}

// claimCSIDriver is the CSI driver of the volume bound to a claim ("" when
// it is no CSI volume).
func (p *Plugin) claimCSIDriver(ctx context.Context, namespace, claim string) (string, error) {
	pvc, err := get[*corev1.PersistentVolumeClaim](ctx, p.PersistentVolumeClaims, namespace, claim)
	if err != nil {
		return "", err
	}
	pv, err := get[*corev1.PersistentVolume](ctx, p.PersistentVolumes, "", pvc.Spec.VolumeName)
	if err != nil {
		return "", err
	}
	if pv.Spec.CSI != nil {
		return pv.Spec.CSI.Driver, nil
	}
	return "", nil
}

func (p *Plugin) driverHasAudience(ctx context.Context, driver, audience string) (bool, error) {
	d, err := get[*storagev1.CSIDriver](ctx, p.CSIDrivers, "", driver)
	if err != nil {
		return false, err
	}
	for _, tr := range d.Spec.TokenRequests {
		if tr.Audience == audience {
			return true, nil
		}
	}
	return false, nil
}

// authorizerAttributes are kube's attributes of the plugin's own checks:
// verb on the resource named, in the request's group and namespace.
func (r *nodeRequest) authorizerAttributes(verb, resource, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: r.user, Verb: verb, APIGroup: r.a.Resource.Group, APIVersion: r.a.Resource.Version,
		Resource: resource, Namespace: r.a.Namespace, Name: name, ResourceRequest: true,
	}
}
