// Package webhook runs the admission webhooks the API declares
// (MutatingWebhookConfiguration and ValidatingWebhookConfiguration), as
// kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook
// plugins do: which webhooks a request concerns (rules, namespace and
// object selectors, matchConditions), the AdmissionReview (v1, or v1beta1
// when a webhook asks only for it) posted over HTTPS through
// pkg/registry/webhookclient's client, failure policies and timeouts, dry runs
// and side effects, JSON patches, reinvocation and warnings.
//
// kube's rules are k8s.io/apiserver's own where they are a library: the
// webhook accessors, rule matching, the object selector, the CEL of
// matchConditions, and the reviews' creation and checks; the dispatch,
// the configurations' source and the calls are this package's.
package webhook

import (
	"context"
	"fmt"
	"reflect"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	webhookerrors "k8s.io/apiserver/pkg/admission/plugin/webhook/errors"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// dispatcher is what the mutating and validating plugins share: the
// source of webhooks and what deciding whether to call one needs.
type dispatcher struct {
	source *Source
	// namespaces reads the namespaces whose labels namespaceSelectors
	// select.
	namespaces rest.Getter
}

func newDispatcher(source *Source, namespaces rest.Getter) dispatcher {
	return dispatcher{source: source, namespaces: namespaces}
}

// attributes are kube's admission attributes of a request: obj is the
// object written (or, for a validating check of a delete, the object
// deleted, which kube gives webhooks as the old object).
func attributes(ctx context.Context, a handlers.Attributes, obj runtime.Object) admission.Attributes {
	object, old := obj, a.Old
	if a.Operation == handlers.Delete {
		object, old = nil, obj
	}
	info, _ := request.UserFrom(ctx)
	options := a.Options
	if options != nil {
		// A review's options name their kind (CreateOptions, ...).
		options = options.DeepCopyObject()
		options.GetObjectKind().SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind(reflect.TypeOf(options).Elem().Name()))
	}
	return admission.NewAttributesRecord(object, old, a.Kind, a.Namespace, a.Name, a.Resource, a.Subresource,
		admission.Operation(a.Operation), options, a.DryRun, info)
}

// ready reports whether webhooks may be dispatched: the configurations
// were listed (kube refuses requests until its informers synced), and the
// request is not about a configuration itself (kube exempts them, so that
// no webhook can lock them).
func (d *dispatcher) ready(ctx context.Context, attr admission.Attributes) (bool, error) {
	if rules.IsExemptAdmissionConfigurationResource(attr) {
		return false, nil
	}
	if !d.source.WaitSynced(ctx) {
		return false, admission.NewForbidden(attr, fmt.Errorf("not yet ready to handle request"))
	}
	return true, nil
}

// versioned are the attributes at the kind webhooks see (the request's:
// an object reaches admission at the version its request names).
func versioned(attr admission.Attributes) *admission.VersionedAttributes {
	v := &admission.VersionedAttributes{Attributes: attr, VersionedKind: attr.GetKind()}
	v.VersionedObject = admission.NewLazyObject(withKind(attr.GetObject(), attr.GetKind()))
	v.VersionedOldObject = admission.NewLazyObject(withKind(attr.GetOldObject(), attr.GetKind()))
	return v
}

// withKind sets the kind of obj (typed objects travel without one), so
// that a review's object names it.
func withKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if obj != nil && obj.GetObjectKind().GroupVersionKind().Empty() {
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return obj
}

// shouldCall returns the invocation of h for the request, nil when h is
// not concerned, as kube's ShouldCallHook: the selectors, the rules (at
// the request's version, then, with matchPolicy Equivalent, at the other
// versions of its resource), then matchConditions. The attributes
// returned are at the invocation's kind; eq is the version converted to
// (nil: the request's own).
func (d *dispatcher) shouldCall(ctx context.Context, h *hook, v *admission.VersionedAttributes) (*invocation, *admission.VersionedAttributes, *Equivalent, error) {
	attr := v.Attributes
	nsMatches, nsErr := d.matchNamespace(ctx, h, attr)
	if !nsMatches && nsErr == nil {
		return nil, nil, nil, nil
	}
	objMatches, objErr := (&object.Matcher{}).MatchObjectSelector(h, attr)
	if !objMatches && objErr == nil {
		return nil, nil, nil, nil
	}
	var inv *invocation
	for _, r := range h.rules {
		if (&rules.Matcher{Rule: r, Attr: attr}).Matches() {
			inv = &invocation{resource: attr.GetResource(), subresource: attr.GetSubresource(), kind: attr.GetKind()}
			break
		}
	}
	var eq *Equivalent
	if policy := h.matchPolicy; inv == nil && policy != nil && *policy == admissionregistrationv1.Equivalent {
		inv, eq = d.matchEquivalent(h, attr)
	}
	if inv == nil {
		return nil, nil, nil, nil
	}
	if nsErr != nil {
		return nil, nil, nil, nsErr
	}
	if objErr != nil {
		return nil, nil, nil, objErr
	}
	if eq != nil {
		var err error
		if v, err = convertedAttributes(v, eq); err != nil {
			return nil, nil, nil, err
		}
	}
	if len(h.matchConditions) > 0 {
		result := h.matcher().Match(ctx, v, nil, nil)
		if result.Error != nil {
			return nil, nil, nil, apierrors.NewForbidden(attr.GetResource().GroupResource(), attr.GetName(), result.Error)
		}
		if !result.Matches {
			return nil, nil, nil, nil
		}
	}
	return inv, v, eq, nil
}

// matchNamespace is kube's namespaceSelector rule: a cluster-scoped object
// (but a namespace) always matches; a namespace written is matched by its
// own labels; else by its namespace's, read from the cache first and from
// etcd when the cache does not know it yet.
func (d *dispatcher) matchNamespace(ctx context.Context, h *hook, attr admission.Attributes) (bool, error) {
	isNamespace := attr.GetResource().Group == "" && attr.GetResource().Resource == "namespaces"
	if attr.GetNamespace() == "" && !isNamespace {
		return true, nil
	}
	selector, err := h.namespaceSelector, h.namespaceSelectorErr
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if selector.Empty() {
		return true, nil
	}
	if isNamespace && attr.GetSubresource() == "" &&
		(attr.GetOperation() == admission.Create || attr.GetOperation() == admission.Update) {
		m, err := meta.Accessor(attr.GetObject())
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		return selector.Matches(labels.Set(m.GetLabels())), nil
	}
	name := attr.GetNamespace()
	if isNamespace {
		name = attr.GetName()
	}
	nsCtx := request.WithNamespace(ctx, "")
	obj, err := d.namespaces.Get(nsCtx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = d.namespaces.Get(nsCtx, name, &metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return false, err // kube answers 404, as before selectors existed
	}
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return selector.Matches(labels.Set(obj.(*corev1.Namespace).Labels)), nil
}

// call posts the review of v to h and returns kube's view of the answer.
// Errors are kube's: a dry run h cannot take part in (400), a failure to
// call (a callError, which the failure policy judges), or the answer was
// a refusal (a rejection).
func call(ctx context.Context, h *hook, inv *invocation, v *admission.VersionedAttributes) (*response, error) {
	name := h.name
	if v.Attributes.IsDryRun() {
		if h.sideEffects == nil {
			return nil, &callError{webhook: name, reason: fmt.Errorf("Webhook SideEffects is nil"),
				status: apierrors.NewBadRequest("Webhook SideEffects is nil")}
		}
		if se := *h.sideEffects; se != admissionregistrationv1.SideEffectClassNone && se != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("admission webhook %q does not support dry run", name))
		}
	}
	uid, review, answer, err := newReview(h, v, inv)
	if err != nil {
		return nil, &callError{webhook: name, reason: fmt.Errorf("could not create admission objects: %w", err),
			status: apierrors.NewBadRequest("error creating admission objects")}
	}
	if h.clientErr != nil {
		return nil, &callError{webhook: name, reason: fmt.Errorf("could not get REST client: %w", h.clientErr),
			status: apierrors.NewInternalError(h.clientErr)}
	}
	if t := h.timeoutSeconds; t != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(*t)*time.Second)
		defer cancel()
	}
	if err := h.client.PostWithTimeout(ctx, review, answer); err != nil {
		return nil, &callError{webhook: name, reason: fmt.Errorf("failed to call webhook: %w", err),
			status: apierrors.NewServiceUnavailable("error calling webhook")}
	}
	result, err := verify(uid, h.mutating, answer)
	if err != nil {
		return nil, &callError{webhook: name, reason: fmt.Errorf("received invalid webhook response: %w", err),
			status: apierrors.NewServiceUnavailable("error validating webhook response")}
	}
	annotateAnswer(ctx, h, result.auditAnnotations)
	for _, w := range result.warnings {
		request.AddWarning(ctx, w)
	}
	if !result.allowed {
		return nil, &rejection{status: webhookerrors.ToStatusErr(name, result.result)}
	}
	return result, nil
}

// failed is the error a request gets for err, a webhook's failure or
// refusal; ignore reports that err is a failure to call that the failure
// policy lets pass.
func failed(ctx context.Context, policy *admissionregistrationv1.FailurePolicyType, err error) (error, bool) {
	switch e := err.(type) {
	case *callError:
		if policy != nil && *policy == admissionregistrationv1.Ignore {
			if ctx.Err() != nil {
				// The request's own deadline passed: no point going on.
				return apierrors.NewTimeoutError("request did not complete within requested timeout", 0), false
			}
			return nil, true
		}
		return apierrors.NewInternalError(e), false
	case *rejection:
		return e.status, false
	}
	return err, false
}
