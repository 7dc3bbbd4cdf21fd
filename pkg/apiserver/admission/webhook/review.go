package webhook

import (
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/utils/ptr"
)

// callError is a failure to call a webhook (not a refusal), which the
// webhook's failure policy judges; its text is kube's ErrCallingWebhook's.
type callError struct {
	webhook string
	reason  error
	status  *apierrors.StatusError
}

func (e *callError) Error() string {
	if e.reason != nil {
		return fmt.Sprintf("failed calling webhook %q: %v", e.webhook, e.reason)
	}
	return fmt.Sprintf("failed calling webhook %q; no further details available", e.webhook)
}

// rejection is a webhook's refusal of a request.
type rejection struct{ status *apierrors.StatusError }

func (e *rejection) Error() string { return e.status.Error() }

// response is what a webhook answered, whichever review version it spoke.
type response struct {
	allowed   bool
	patch     []byte
	patchType admissionv1.PatchType
	result    *metav1.Status
	warnings  []string
	// auditAnnotations are the annotations the webhook asks the request's
	// audit event to carry.
	auditAnnotations map[string]string
}

// newReview returns the review of v that h is sent, at the first version
// of its admissionReviewVersions this server speaks, with its kind set,
// and an empty review of that version for the answer.
func newReview(h *hook, v *admission.VersionedAttributes, inv *invocation) (types.UID, runtime.Object, runtime.Object, error) {
	for _, version := range h.reviewVersions {
		switch version {
		case admissionv1.SchemeGroupVersion.Version:
			uid := types.UID(uuid.NewUUID())
			review := &admissionv1.AdmissionReview{Request: v1Request(uid, v, inv)}
			review.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
			return uid, review, &admissionv1.AdmissionReview{}, nil
		case admissionv1beta1.SchemeGroupVersion.Version:
			uid := types.UID(uuid.NewUUID())
			req := v1Request(uid, v, inv)
			review := &admissionv1beta1.AdmissionReview{Request: &admissionv1beta1.AdmissionRequest{
				UID: req.UID, Kind: req.Kind, Resource: req.Resource, SubResource: req.SubResource,
				RequestKind: req.RequestKind, RequestResource: req.RequestResource, RequestSubResource: req.RequestSubResource,
				Name: req.Name, Namespace: req.Namespace, Operation: admissionv1beta1.Operation(req.Operation),
				UserInfo: req.UserInfo, Object: req.Object, OldObject: req.OldObject, DryRun: req.DryRun, Options: req.Options,
			}}
			review.SetGroupVersionKind(admissionv1beta1.SchemeGroupVersion.WithKind("AdmissionReview"))
			return uid, review, &admissionv1beta1.AdmissionReview{}, nil
		}
	}
	return "", nil, nil, fmt.Errorf("webhook does not accept known AdmissionReview versions (v1, v1beta1)")
}

// v1Request is the request of a review, as kube fills it: the kind and
// resource the webhook matched, and the request's own.
func v1Request(uid types.UID, v *admission.VersionedAttributes, inv *invocation) *admissionv1.AdmissionRequest {
	attr := v.Attributes
	user := attr.GetUserInfo()
	info := authenticationv1.UserInfo{Username: user.GetName(), UID: user.GetUID(), Groups: user.GetGroups(),
		Extra: map[string]authenticationv1.ExtraValue{}}
	for k, values := range user.GetExtra() {
		info.Extra[k] = values
	}
	dryRun := attr.IsDryRun()
	kind, resource := attr.GetKind(), attr.GetResource()
	return &admissionv1.AdmissionRequest{
		UID:                uid,
		Kind:               metav1.GroupVersionKind(inv.kind),
		Resource:           metav1.GroupVersionResource(inv.resource),
		SubResource:        inv.subresource,
		RequestKind:        ptr.To(metav1.GroupVersionKind(kind)),
		RequestResource:    ptr.To(metav1.GroupVersionResource(resource)),
		RequestSubResource: attr.GetSubresource(),
		Name:               attr.GetName(),
		Namespace:          attr.GetNamespace(),
		Operation:          admissionv1.Operation(attr.GetOperation()),
		UserInfo:           info,
		Object:             runtime.RawExtension{Object: v.VersionedObject.Object()},
		OldObject:          runtime.RawExtension{Object: v.VersionedOldObject.Object()},
		DryRun:             &dryRun,
		Options:            runtime.RawExtension{Object: attr.GetOperationOptions()},
	}
}

// verify checks a webhook's answer as kube does (the messages are kube's):
// a v1 answer must echo the request's uid and kind, and only mutating
// webhooks patch, naming the patch's type; v1beta1 answers were never
// checked, and their patches are JSON patches.
func verify(uid types.UID, mutating bool, answer runtime.Object) (*response, error) {
	switch r := answer.(type) {
	case *admissionv1.AdmissionReview:
		if r.Response == nil {
			return nil, fmt.Errorf("webhook response was absent")
		}
		if r.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
		}
		if want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"); r.GroupVersionKind() != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), r.GroupVersionKind().String())
		}
		out := &response{allowed: r.Response.Allowed, result: r.Response.Result, warnings: r.Response.Warnings,
			auditAnnotations: r.Response.AuditAnnotations}
		patch, patchType := r.Response.Patch, r.Response.PatchType
		if !mutating {
			if len(patch) > 0 {
				return nil, fmt.Errorf("validating webhook may not return response.patch")
			}
			if patchType != nil {
				return nil, fmt.Errorf("validating webhook may not return response.patchType")
			}
			return out, nil
		}
		switch {
		case len(patch) > 0 && patchType == nil:
			return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
		case len(patch) == 0 && patchType != nil:
			return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
		case patchType != nil && *patchType == "":
			return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", *patchType)
		}
		out.patch = patch
		if patchType != nil {
			out.patchType = *patchType
		}
		return out, nil
	case *admissionv1beta1.AdmissionReview:
		if r.Response == nil {
			return nil, fmt.Errorf("webhook response was absent")
		}
		out := &response{allowed: r.Response.Allowed, result: r.Response.Result, warnings: r.Response.Warnings,
			auditAnnotations: r.Response.AuditAnnotations}
		if mutating && len(r.Response.Patch) > 0 {
			out.patch, out.patchType = r.Response.Patch, admissionv1.PatchTypeJSONPatch
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected response type %T", answer)
}
