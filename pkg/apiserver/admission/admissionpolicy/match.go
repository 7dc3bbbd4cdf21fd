package admissionpolicy

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

func errNilSelector(which string) error {
	return fmt.Errorf("a nil %s selector was passed, please ensure selectors are initialized properly", which)
}

// matcher decides whether match resources select a request, as kube's
// policy matcher does (its rule and object-selector predicates are
// k8s.io/apiserver's; namespaces and equivalent resources come from this
// server's storage and endpoints).
type matcher struct {
	namespaces rest.Getter
	resources  *Resources
}

// matches reports whether c selects a, and the resource and kind it
// matched (another version's under matchPolicy Equivalent).
func (m *matcher) matches(ctx context.Context, a admission.Attributes, c *criteria) (bool, schema.GroupVersionResource, schema.GroupVersionKind, error) {
	nsMatches, nsErr := m.matchNamespace(ctx, a, c.namespaceSelector)
	if !nsMatches && nsErr == nil {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nil
	}
	objMatches, objErr := (&object.Matcher{}).MatchObjectSelector(c, a)
	if !objMatches && objErr == nil {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nil
	}
	if excluded, _, _, err := m.matchRules(a, c.ExcludeResourceRules, c.MatchPolicy); excluded || err != nil {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, err
	}
	ok, gvr, gvk := true, a.GetResource(), a.GetKind()
	if len(c.ResourceRules) > 0 {
		var err error
		if ok, gvr, gvk, err = m.matchRules(a, c.ResourceRules, c.MatchPolicy); err != nil {
			return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, err
		}
	}
	if !ok {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nil
	}
	// Selector errors count only for requests the rules select.
	if nsErr != nil {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nsErr
	}
	if objErr != nil {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, objErr
	}
	return true, gvr, gvk, nil
}

// matchRules tries the rules on the request's resource, then (matchPolicy
// Equivalent) on the resources sharing its storage.
func (m *matcher) matchRules(a admission.Attributes, named []admissionregistrationv1.NamedRuleWithOperations,
	policy *admissionregistrationv1.MatchPolicyType) (bool, schema.GroupVersionResource, schema.GroupVersionKind, error) {
	for i := range named {
		if (&rules.Matcher{Rule: named[i].RuleWithOperations, Attr: a}).Matches() && nameMatches(named[i].ResourceNames, a.GetName()) {
			return true, a.GetResource(), a.GetKind(), nil
		}
	}
	if policy == nil || *policy == admissionregistrationv1.Exact {
		return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nil
	}
	equivalents := m.resources.EquivalentResourcesFor(a.GetResource(), a.GetSubresource())
	for i := range named {
		for _, eq := range equivalents {
			if eq == a.GetResource() {
				continue
			}
			if !(&rules.Matcher{Rule: named[i].RuleWithOperations, Attr: &resourceOverride{a, eq}}).Matches() {
				continue
			}
			kind := m.resources.KindFor(eq, a.GetSubresource())
			if kind.Empty() {
				return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, fmt.Errorf("unable to convert to %v: unknown kind", eq)
			}
			if nameMatches(named[i].ResourceNames, a.GetName()) {
				return true, eq, kind, nil
			}
		}
	}
	return false, schema.GroupVersionResource{}, schema.GroupVersionKind{}, nil
}

// nameMatches: an empty list matches every name.
func nameMatches(names []string, name string) bool {
	if len(names) == 0 {
		return true
	}
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

type resourceOverride struct {
	admission.Attributes
	resource schema.GroupVersionResource
}

func (r *resourceOverride) GetResource() schema.GroupVersionResource { return r.resource }

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// matchNamespace applies a namespace selector: cluster-scoped objects
// other than namespaces always match; a namespace being created or updated
// is matched by its own labels.
func (m *matcher) matchNamespace(ctx context.Context, a admission.Attributes, selector labels.Selector) (bool, error) {
	isNamespace := a.GetResource().GroupResource() == namespacesResource
	if a.GetNamespace() == "" && !isNamespace {
		return true, nil
	}
	if selector.Empty() {
		return true, nil
	}
	if isNamespace && a.GetSubresource() == "" && (a.GetOperation() == admission.Create || a.GetOperation() == admission.Update) {
		accessor, err := meta.Accessor(a.GetObject())
		if err != nil {
			return false, apierrors.NewInternalError(err)
		}
		return selector.Matches(labels.Set(accessor.GetLabels())), nil
	}
	ns, err := m.namespace(ctx, a.GetNamespace())
	if apierrors.IsNotFound(err) {
		return false, err // kube's 404, for compatibility
	}
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return selector.Matches(labels.Set(ns.Labels)), nil
}

// namespace reads a namespace from the cache, then from etcd when the
// cache has not seen it yet (as kube's lister falls back to a live read).
func (m *matcher) namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ctx = request.WithNamespace(ctx, "")
	obj, err := m.namespaces.Get(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = m.namespaces.Get(ctx, name, &metav1.GetOptions{})
	}
	if err != nil {
		return nil, err
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, fmt.Errorf("namespaces storage returned %T", obj)
	}
	return ns, nil
}

// binding is implemented by compiled bindings of both kinds.
type binding interface{ binding() *bound }

// selectBindings finds the bindings of policy p that select the request,
// in order, and calls use with each and its params (nil: none is
// declared). Configuration errors (the policy's, bindings' and params')
// go to configError, with a nil binding for the policy's own. It reports
// whether the policy matches the request; an error of use ends it.
func selectBindings[B binding](ctx context.Context, m *matcher, a admission.Attributes, p *common, bindings []B,
	configError func(error, B), use func(B, schema.GroupVersionResource, schema.GroupVersionKind, []runtime.Object) error) (bool, error) {
	var none B
	if p.constraints == nil {
		configError(p.configErr, none)
		return false, nil
	}
	ok, gvr, gvk, err := m.matches(ctx, a, p.constraints)
	switch {
	case err != nil:
		configError(err, none)
		return false, nil
	case !ok:
		return false, nil
	case p.paramErr != nil:
		configError(p.paramErr, none)
		return false, nil
	}
	for _, b := range bindings {
		bd := b.binding()
		if bd.err != nil {
			configError(bd.err, b)
			continue
		}
		if bd.criteria != nil {
			ok, _, _, err := m.matches(ctx, a, bd.criteria)
			if err != nil {
				configError(err, b)
			}
			if !ok || err != nil {
				continue
			}
		}
		params, err := m.params(ctx, p.paramKind, bd.paramRef, a.GetNamespace())
		if err != nil {
			configError(err, b)
			continue
		}
		if err := use(b, gvr, gvk, params); err != nil {
			return true, err
		}
	}
	return true, nil
}
