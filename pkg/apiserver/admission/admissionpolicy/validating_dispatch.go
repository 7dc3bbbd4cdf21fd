package admissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	admissionauthorizer "k8s.io/apiserver/pkg/admission/plugin/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Config is what the admission step reads.
type Config struct {
	// Policies and Bindings are the storages of validatingadmissionpolicies
	// and validatingadmissionpolicybindings.
	Policies, Bindings Storage
	// Namespaces reads namespaces (selectors, namespaceObject).
	Namespaces rest.Getter
	// Resources are the served endpoints (paramKind, matchPolicy).
	Resources *Resources
	// Authorizer answers the authorizer variable (nil: it is not set).
	Authorizer authorizer.Authorizer
}

// Validating is the ValidatingAdmissionPolicy admission step: it runs at
// kube's validating step, after mutation and the schema's validation.
type Validating struct {
	step[*validatingPolicy, *validatingBinding]
}

// NewValidating returns the step; Run feeds it.
func NewValidating(cfg Config) *Validating {
	return &Validating{newStep(cfg, cfg.Resources.compileValidatingPolicy, compileValidatingBinding)}
}

// step is what the validating and mutating steps share: the policies and
// bindings of their kind as compiled, the matcher, and the authorizer
// that the policies' authorizer variable asks.
type step[P, B compiled] struct {
	source  *source[P, B]
	matcher *matcher
	authz   authorizer.Authorizer
}

func newStep[P, B compiled](cfg Config, compilePolicy func(runtime.Object) P, compileBinding func(runtime.Object) B) step[P, B] {
	return step[P, B]{
		source:  newSource(cfg.Policies, cfg.Bindings, compilePolicy, compileBinding),
		matcher: &matcher{namespaces: cfg.Namespaces, resources: cfg.Resources},
		authz:   cfg.Authorizer,
	}
}

// Run follows the policies and bindings until ctx ends.
func (s *step[P, B]) Run(ctx context.Context) { s.source.run(ctx) }

// ready returns the hooks to run on a request once the first lists of
// policies and bindings are in (none: the step has nothing to do); a
// request that waited too long for them is refused, as kube's are.
func (s *step[P, B]) ready(ctx context.Context, ha handlers.Attributes, obj runtime.Object) ([]hook[P, B], error) {
	if !s.source.waitForSync(ctx, timeToWaitForSync) {
		return nil, admission.NewForbidden(newAttributes(ctx, ha, obj), errors.New("not yet ready to handle request"))
	}
	return *s.source.hooks.Load(), nil
}

// requestAuthorizer is the authorizer of one request's run: its answers
// are cached for the request (nil: the step has no authorizer).
func (s *step[P, B]) requestAuthorizer() authorizer.UnconditionalAuthorizer {
	if s.authz == nil {
		return nil
	}
	return admissionauthorizer.NewCachingAuthorizer(s.authz)
}

// excludedResources are never subject to policies: the policies' own
// configuration (no circular dependencies), and reviews, which are not
// stored.
var excludedResources = sets.New(
	schema.GroupResource{Group: admissionregistrationv1.GroupName, Resource: "validatingadmissionpolicies"},
	schema.GroupResource{Group: admissionregistrationv1.GroupName, Resource: "validatingadmissionpolicybindings"},
	schema.GroupResource{Group: admissionregistrationv1.GroupName, Resource: "mutatingadmissionpolicies"},
	schema.GroupResource{Group: admissionregistrationv1.GroupName, Resource: "mutatingadmissionpolicybindings"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	schema.GroupResource{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	schema.GroupResource{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
)

// timeToWaitForSync is how long a request waits for the first lists of
// policies and bindings (kube's admission handlers wait as long).
const timeToWaitForSync = 10 * time.Second

// Validate implements handlers.Admission.
func (v *Validating) Validate(ctx context.Context, ha handlers.Attributes, obj runtime.Object) error {
	if excludedResources.Has(ha.Resource.GroupResource()) {
		return nil
	}
	hooks, err := v.ready(ctx, ha, obj)
	if len(hooks) == 0 {
		return err
	}
	a := newAttributes(ctx, ha, obj)
	d := &dispatch{Validating: v, attrs: a, versioned: map[schema.GroupVersionKind]*admission.VersionedAttributes{},
		authz: v.requestAuthorizer()}
	for i := range hooks {
		if err := d.run(ctx, &hooks[i]); err != nil {
			return err
		}
	}
	if len(d.failures) > 0 {
		publishValidationFailures(ctx, d.failures)
	}
	if len(d.denied) > 0 {
		return denial(a, d.denied[0])
	}
	return nil
}

// ValidateConnect implements handlers.ConnectAdmission, as kube's plugin
// handles CONNECT: the policies whose rules name the operation (or "*")
// validate the request's options (a PodExecOptions, say) as the object,
// with no old object and no options.
func (v *Validating) ValidateConnect(ctx context.Context, ha handlers.Attributes, obj runtime.Object) error {
	return v.Validate(ctx, ha, obj)
}

// dispatch is the state of one request's run through the policies.
type dispatch struct {
	*Validating
	attrs     admission.Attributes
	authz     authorizer.UnconditionalAuthorizer
	versioned map[schema.GroupVersionKind]*admission.VersionedAttributes
	namespace *corev1.Namespace
	nsRead    bool
	denied    []decision
	failures  []validationFailure
}

// configError records a policy's or binding's configuration error by
// the policy's failurePolicy.
func (d *dispatch) configError(err error, p *validatingPolicy, b *validatingBinding) {
	if p.ignoresFailures() {
		return
	}
	msg := fmt.Errorf("failed to configure policy: %w", err).Error()
	if b != nil {
		msg = fmt.Errorf("failed to configure binding: %w", err).Error()
	}
	d.denied = append(d.denied, decision{policy: p, binding: b, message: msg})
}

func (d *dispatch) run(ctx context.Context, h *hook[*validatingPolicy, *validatingBinding]) error {
	p := h.policy
	audits := newAuditAnnotations()
	selected, err := selectBindings(ctx, d.matcher, d.attrs, &p.common, h.bindings,
		func(err error, b *validatingBinding) { d.configError(err, p, b) },
		func(b *validatingBinding, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, params []runtime.Object) error {
			return d.runBinding(ctx, p, b, gvr, gvk, params, audits)
		})
	if selected {
		audits.publish(ctx, p.Name)
	}
	return err
}

func (d *dispatch) runBinding(ctx context.Context, p *validatingPolicy, b *validatingBinding, gvr schema.GroupVersionResource,
	gvk schema.GroupVersionKind, params []runtime.Object, audits auditAnnotations) error {
	va := d.versioned[gvk]
	if va == nil && len(params) > 0 {
		var err error
		if va, err = versionedAttributes(d.attrs, gvk, d.matcher.resources); err != nil {
			d.configError(fmt.Errorf("failed to convert object version: %w", err), p, b)
			return nil
		}
		d.versioned[gvk] = va
	}
	ns, err := d.requestNamespace(ctx)
	if err != nil {
		return err
	}
	for _, param := range params {
		d.record(ctx, p, b, p.validate(ctx, gvr, va, param, ns, d.authz), audits)
	}
	return nil
}

// record applies the binding's validationActions to the outcome of one
// evaluation: Deny fails the request, Warn adds a Warning, Audit an
// audit annotation; a failing audit annotation denies.
func (d *dispatch) record(ctx context.Context, p *validatingPolicy, b *validatingBinding, o outcome, audits auditAnnotations) {
	for i, v := range o.verdicts {
		if !v.deny {
			continue
		}
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				d.denied = append(d.denied, decision{policy: p, binding: b, message: v.message, reason: v.reason})
			case admissionregistrationv1.Audit:
				d.failures = append(d.failures, validationFailure{ExpressionIndex: i, Message: v.message,
					ValidationActions: b.Spec.ValidationActions, Binding: b.Name, Policy: b.Spec.PolicyName})
			case admissionregistrationv1.Warn:
				request.AddWarning(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", p.Name, b.Name, v.message))
			}
		}
	}
	for _, an := range o.audits {
		switch {
		case an.err != "":
			d.denied = append(d.denied, decision{policy: p, binding: b, message: an.err})
		case an.publish:
			audits.add(an.key, an.value)
		}
	}
}

// requestNamespace reads the namespace of the request once (nil for
// cluster-scoped objects, and for namespaces themselves).
func (d *dispatch) requestNamespace(ctx context.Context) (*corev1.Namespace, error) {
	if d.nsRead {
		return d.namespace, nil
	}
	name := d.attrs.GetNamespace()
	if k := d.attrs.GetKind(); k.Group == "" && k.Version == "v1" && k.Kind == "Namespace" {
		name = ""
	}
	if name != "" {
		ns, err := d.matcher.namespace(ctx, name)
		if err != nil {
			return nil, err
		}
		d.namespace = ns
	}
	d.nsRead = true
	return d.namespace, nil
}

// decision is a policy's denial, with where it came from.
type decision struct {
	policy  *validatingPolicy
	binding *validatingBinding
	message string
	reason  metav1.StatusReason
}

// denial is kube's Status for the first denial: Invalid (422) unless the
// validation names another reason.
func denial(a admission.Attributes, d decision) error {
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy.Name, d.message)
	if d.binding != nil {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy.Name, d.binding.Name, d.message)
	}
	err := admission.NewForbidden(a, errors.New(msg)).(*apierrors.StatusError)
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	err.ErrStatus.Reason = reason
	err.ErrStatus.Code = reasonCode(reason)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: msg})
	return err
}

func reasonCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}

// validationFailure is an entry of kube's validation_failure audit
// annotation (the Audit action).
type validationFailure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// maxValidationFailures bounds the annotation (about 10KB), as kube does.
const maxValidationFailures = 50

func publishValidationFailures(ctx context.Context, failures []validationFailure) {
	if len(failures) > maxValidationFailures {
		failures = failures[:maxValidationFailures]
	}
	value, err := json.Marshal(failures)
	if err != nil {
		return
	}
	request.AddAuditAnnotation(ctx, "validation.policy.admission.k8s.io/validation_failure", string(value))
}

// auditAnnotations collects a policy's audit annotations over its
// bindings: distinct values of one key are joined.
type auditAnnotations map[string][]string

func newAuditAnnotations() auditAnnotations { return auditAnnotations{} }

func (a auditAnnotations) add(key, value string) {
	for _, v := range a[key] {
		if v == value {
			return
		}
	}
	a[key] = append(a[key], value)
}

func (a auditAnnotations) publish(ctx context.Context, policy string) {
	for key, values := range a {
		request.AddAuditAnnotation(ctx, policy+"/"+key, strings.Join(values, ", "))
	}
}
