package admissionpolicy

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Mutating is the MutatingAdmissionPolicy admission step: it runs at
// kube's mutating step, before the registry's defaults and validation.
type Mutating struct {
	step[*mutatingPolicy, *bound]
	resources *Resources
}

// NewMutating returns the step over the storages of
// mutatingadmissionpolicies and mutatingadmissionpolicybindings (in cfg's
// Policies and Bindings); Run feeds it.
func NewMutating(cfg Config) *Mutating {
	return &Mutating{
		step:      newStep(cfg, cfg.Resources.compileMutatingPolicy, compileMutatingBinding),
		resources: cfg.Resources,
	}
}

// Validate implements handlers.Admission: the step only mutates.
func (m *Mutating) Validate(context.Context, handlers.Attributes, runtime.Object) error { return nil }

// Admit implements handlers.MutatingAdmission: the policies that match
// change obj in place. Policies with reinvocationPolicy IfNeeded run a
// second time when a mutation ran after them, as kube's admission chain
// reinvokes them.
func (m *Mutating) Admit(ctx context.Context, ha handlers.Attributes, obj runtime.Object) error {
	if excludedResources.Has(ha.Resource.GroupResource()) || obj == nil {
		return nil
	}
	hooks, err := m.ready(ctx, ha, obj)
	if len(hooks) == 0 {
		return err
	}
	r := &mutation{Mutating: m, attrs: newAttributes(ctx, ha, obj), object: obj, defaults: ha.Default, structure: ha.Structure,
		reinvoke: sets.New[invocationKey](), invoked: sets.New[invocationKey](), authz: m.requestAuthorizer()}
	invocations, err := r.invocations(ctx, hooks)
	if err != nil {
		return err
	}
	if len(invocations) == 0 {
		return r.denial()
	}
	again, err := r.pass(ctx, invocations, false)
	if err != nil {
		return err
	}
	if err := r.denial(); err != nil || !again {
		return err
	}
	// The second pass reports its own errors: what the first one found
	// was ignored (failurePolicy Ignore).
	r.errs = nil
	if _, err := r.pass(ctx, invocations, true); err != nil {
		return err
	}
	return r.denial()
}

// AdmitConnect implements handlers.MutatingConnectAdmission, as kube's
// plugin handles CONNECT: the policies whose rules name the operation
// mutate the request's options, which the storage then connects with.
func (m *Mutating) AdmitConnect(ctx context.Context, ha handlers.Attributes, obj runtime.Object) error {
	return m.Admit(ctx, ha, obj)
}

// mutation is the state of one request's run through the policies.
type mutation struct {
	*Mutating
	attrs  admission.Attributes
	object runtime.Object
	// defaults are the resource's; structure is its kind's when its Go
	// type does not give it (a custom resource).
	defaults  func(runtime.Object)
	structure *rest.Structure
	authz     authorizer.UnconditionalAuthorizer
	errs      []policyError
	// invoked are the IfNeeded invocations run since the last change;
	// reinvoke those a second pass runs.
	invoked, reinvoke sets.Set[invocationKey]
}

// invocation is a binding that selects the request, with one param.
type invocation struct {
	policy  *mutatingPolicy
	binding *bound
	gvr     schema.GroupVersionResource
	gvk     schema.GroupVersionKind
	param   runtime.Object
}

type invocationKey struct{ policy, binding, paramNamespace, paramName string }

func (i *invocation) key() invocationKey {
	k := invocationKey{policy: i.policy.Name, binding: i.binding.name()}
	if m, err := meta.Accessor(i.param); i.param != nil && err == nil {
		k.paramNamespace, k.paramName = m.GetNamespace(), m.GetName()
	}
	return k
}

// policyError is a policy's failure, reported under its failurePolicy.
type policyError struct {
	policy  *mutatingPolicy
	binding *bound
	err     error
	reason  metav1.StatusReason
}

func (e policyError) Error() string {
	if e.binding != nil {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.policy.Name, e.binding.name(), e.err)
	}
	return fmt.Sprintf("policy %q denied request: %s", e.policy.Name, e.err)
}

func (r *mutation) configError(err error, p *mutatingPolicy, b *bound) {
	if b == nil {
		err = fmt.Errorf("failed to configure policy: %w", err)
	} else {
		err = fmt.Errorf("failed to configure binding: %w", err)
	}
	r.errs = append(r.errs, policyError{policy: p, binding: b, err: err})
}

// invocations are the bindings that select the request, with their
// params, in the order of the policies' and bindings' names.
func (r *mutation) invocations(ctx context.Context, hooks []hook[*mutatingPolicy, *bound]) ([]invocation, error) {
	var out []invocation
	for _, h := range hooks {
		p := h.policy
		_, err := selectBindings(ctx, r.matcher, r.attrs, &p.common, h.bindings,
			func(err error, b *bound) { r.configError(err, p, b) },
			func(b *bound, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, params []runtime.Object) error {
				for _, param := range params {
					out = append(out, invocation{policy: p, binding: b, gvr: gvr, gvk: gvk, param: param})
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pass runs the invocations (on a reinvocation, those that asked for
// it), then writes the result into the request's object. It reports
// whether a reinvocation is due: a mutation ran.
func (r *mutation) pass(ctx context.Context, invocations []invocation, reinvocation bool) (bool, error) {
	ns, err := r.namespace(ctx)
	if err != nil {
		return false, err
	}
	va, err := versionedAttributes(r.attrs, invocations[0].gvk, r.resources)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	tc, err := r.typeConverter()
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	patched := false
	for i := range invocations {
		inv := &invocations[i]
		if inv.policy.compileErr != nil {
			r.errs = append(r.errs, policyError{policy: inv.policy, binding: inv.binding, err: inv.policy.compileErr, reason: metav1.StatusReasonInvalid})
			continue
		}
		pctx := inv.policy.compiler.CreateContext(ctx)
		if inv.policy.matchConditions != nil {
			m := inv.policy.matchConditions.Match(pctx, va, inv.param, r.authz)
			if m.Error != nil {
				r.errs = append(r.errs, policyError{policy: inv.policy, binding: inv.binding, err: m.Error, reason: metav1.StatusReasonInvalid})
				continue
			}
			if !m.Matches {
				continue
			}
		}
		key := inv.key()
		if reinvocation && !r.reinvoke.Has(key) {
			continue
		}
		if inv.gvk != va.VersionedKind {
			// Matched at another version (matchPolicy Equivalent): what
			// the invocations so far made goes back into the request's
			// object, which this one sees converted to its kind.
			if patched {
				if err := r.store(va.VersionedObject.Object()); err != nil {
					return false, err
				}
			}
			if va, err = versionedAttributes(r.attrs, inv.gvk, r.resources); err != nil {
				return false, apierrors.NewInternalError(err)
			}
		}
		before := va.VersionedObject.Object()
		for _, patcher := range inv.policy.patchers {
			req := patch.Request{MatchedResource: inv.gvr, VersionedAttributes: va, ObjectInterfaces: objectInterfaces{r.resources},
				OptionalVariables: plugincel.OptionalVariableBindings{VersionedParams: inv.param, Authorizer: r.authz},
				Namespace:         ns, TypeConverter: tc}
			out, err := patcher.Patch(pctx, req, celconfig.RuntimeCELCostBudget)
			if err != nil {
				var status *apierrors.StatusError
				if errors.As(err, &status) {
					return false, status
				}
				r.errs = append(r.errs, policyError{policy: inv.policy, binding: inv.binding, err: err, reason: metav1.StatusReasonInvalid})
				continue
			}
			va.UpdateObject(out)
			patched = true
		}
		if !apiequality.Semantic.DeepEqual(before, va.VersionedObject.Object()) {
			r.requireReinvocation()
		}
		if inv.policy.Spec.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy {
			r.invoked.Insert(key)
		}
	}
	if !patched {
		return false, nil
	}
	r.requireReinvocation()
	return true, r.store(va.VersionedObject.Object())
}

// requireReinvocation marks the IfNeeded invocations run so far for the
// second pass.
func (r *mutation) requireReinvocation() {
	r.reinvoke = r.reinvoke.Union(r.invoked)
	r.invoked = sets.New[invocationKey]()
}

// store writes the mutated object into the request's object, with the
// resource's defaults (kube defaults every patch's result).
func (r *mutation) store(out runtime.Object) error {
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("a mutation returned %T", out))
	}
	want := r.attrs.GetKind()
	if into, ok := r.object.(*unstructured.Unstructured); ok { // a custom resource
		if u.GroupVersionKind() != want { // patched at an equivalent version
			converted, err := r.resources.convert(u, want)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if u, ok = converted.(*unstructured.Unstructured); !ok {
				return apierrors.NewInternalError(fmt.Errorf("converted to %T", converted))
			}
		}
		into.Object = u.Object
		if r.defaults != nil {
			r.defaults(into)
		}
		return nil
	}
	typed, err := r.typed(u, want)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if res, ok := r.resources.byGVR[endpointKey{r.attrs.GetResource(), r.attrs.GetSubresource()}]; ok {
		fieldmanager.Defaulter(res.Storage).Default(typed)
	}
	typed.GetObjectKind().SetGroupVersionKind(r.object.GetObjectKind().GroupVersionKind())
	reflect.ValueOf(r.object).Elem().Set(reflect.ValueOf(typed).Elem())
	return nil
}

// typeConverter gives the structure apply configurations merge with: the
// custom resource's schema, or the built-in kinds'.
func (r *mutation) typeConverter() (managedfields.TypeConverter, error) {
	if r.structure != nil && r.structure.TypeConverter != nil {
		return r.structure.TypeConverter()
	}
	return fieldmanager.TypeConverter()
}

// typed returns u as an object of the request's type, converted from u's
// kind when that is another version's (matchPolicy Equivalent).
func (r *mutation) typed(u *unstructured.Unstructured, want schema.GroupVersionKind) (runtime.Object, error) {
	if u.GroupVersionKind() == want || u.GetKind() == "" {
		typed := reflect.New(reflect.TypeOf(r.object).Elem()).Interface().(runtime.Object)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("failed to convert object: %w", err)
		}
		return typed, nil
	}
	at, err := api.Scheme().New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, at); err != nil {
		return nil, fmt.Errorf("failed to convert object: %w", err)
	}
	out, err := r.resources.convert(at, want)
	if err != nil {
		return nil, err
	}
	if reflect.TypeOf(out) != reflect.TypeOf(r.object) {
		return nil, fmt.Errorf("converted to %T, not %T", out, r.object)
	}
	return out, nil
}

// namespace is the request's namespace object (nil for cluster-scoped
// objects and namespaces themselves).
func (r *mutation) namespace(ctx context.Context) (*corev1.Namespace, error) {
	name := r.attrs.GetNamespace()
	if k := r.attrs.GetKind(); name == "" || (k.Group == "" && k.Version == "v1" && k.Kind == "Namespace") {
		return nil, nil
	}
	ns, err := r.matcher.namespace(ctx, name)
	if err != nil {
		var status *apierrors.StatusError
		if errors.As(err, &status) {
			return nil, status
		}
		return nil, apierrors.NewNotFound(namespacesResource, name)
	}
	return ns, nil
}

// denial is kube's Status for the policies' errors under failurePolicy
// Fail: Forbidden, the first error's message and reason, every error a
// cause.
func (r *mutation) denial() error {
	var failed []policyError
	for _, e := range r.errs {
		if !e.policy.ignoresFailures() {
			failed = append(failed, e)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	err := admission.NewForbidden(r.attrs, errors.New("admission request denied by policy")).(*apierrors.StatusError)
	err.ErrStatus.Message = failed[0].Error()
	if failed[0].reason != "" {
		err.ErrStatus.Reason = failed[0].reason
	}
	for _, e := range failed {
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Message: e.Error()})
	}
	return err
}

// objectInterfaces are the scheme's, for the JSON patcher's serializer.
type objectInterfaces struct{ resources *Resources }

func (objectInterfaces) GetObjectCreater() runtime.ObjectCreater     { return api.Scheme() }
func (objectInterfaces) GetObjectTyper() runtime.ObjectTyper         { return api.Scheme() }
func (objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return api.Scheme() }
func (objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return api.Scheme() }
func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.resources
}
