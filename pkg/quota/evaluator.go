package quota

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// ListFunc lists the objects of one resource in a namespace, for the
// usage a controller recomputes (UsageStats). Admission needs none.
type ListFunc func(namespace string) ([]runtime.Object, error)

// ObjectCountName is the quota resource that counts the objects of gr,
// count/<resource>[.<group>].
func ObjectCountName(gr schema.GroupResource) corev1.ResourceName {
	if gr.Group == "" {
		return corev1.ResourceName("count/" + gr.Resource)
	}
	return corev1.ResourceName("count/" + gr.Resource + "." + gr.Group)
}

// legacyCountNames are the names of object counts from before
// count/<resource> existed, which kube still counts beside it.
var legacyCountNames = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
}

// ignored are the resources kube's quota never counts: virtual ones that
// are not stored, and events.
var ignored = map[schema.GroupResource]bool{
	{Resource: "bindings"}:                                                 true,
	{Resource: "componentstatuses"}:                                        true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
	{Resource: "events"}:                            true,
	{Group: eventsv1.GroupName, Resource: "events"}: true,
}

// Ignored reports whether quota never counts gr.
func Ignored(gr schema.GroupResource) bool { return ignored[gr] }

// Registry hands out the evaluator of each resource: kube's own for
// pods, services and claims, an object count for any other (made on
// first use, as kube's plugin does for resources it learns of, custom
// resources among them).
type Registry struct {
	// List, when set, lists a resource's objects for UsageStats.
	List func(gr schema.GroupResource) ListFunc

	mu         sync.Mutex
	evaluators map[schema.GroupResource]quota.Evaluator
}

// NewRegistry returns a registry; list may be nil (admission).
func NewRegistry(list func(gr schema.GroupResource) ListFunc) *Registry {
	r := &Registry{List: list, evaluators: map[schema.GroupResource]quota.Evaluator{}}
	for _, e := range []quota.Evaluator{
		&podEvaluator{list: r.lister(podsResource)},
		&serviceEvaluator{list: r.lister(servicesResource)},
		&claimEvaluator{list: r.lister(claimsResource)},
	} {
		r.evaluators[e.GroupResource()] = e
	}
	return r
}

func (r *Registry) lister(gr schema.GroupResource) ListFunc {
	if r.List == nil {
		return func(string) ([]runtime.Object, error) {
			return nil, fmt.Errorf("quota: no lister of %s", gr)
		}
	}
	return r.List(gr)
}

// Get returns the evaluator of gr, nil for an ignored resource.
func (r *Registry) Get(gr schema.GroupResource) quota.Evaluator {
	if ignored[gr] {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.evaluators[gr]
	if !ok {
		e = NewObjectCountEvaluator(gr, r.lister(gr))
		r.evaluators[gr] = e
	}
	return e
}

// NewObjectCountEvaluator counts the objects of gr, under count/<gr> and,
// for the few resources that have one, their legacy name.
func NewObjectCountEvaluator(gr schema.GroupResource, list ListFunc) quota.Evaluator {
	names := []corev1.ResourceName{ObjectCountName(gr)}
	if alias, ok := legacyCountNames[gr]; ok {
		names = append(names, alias)
	}
	return &objectCountEvaluator{gr: gr, list: list, names: names}
}

type objectCountEvaluator struct {
	gr    schema.GroupResource
	list  ListFunc
	names []corev1.ResourceName
}

func (o *objectCountEvaluator) Constraints([]corev1.ResourceName, runtime.Object) error { return nil }

func (o *objectCountEvaluator) GroupResource() schema.GroupResource { return o.gr }

// Handles: only creates add an object; subresources never do.
func (o *objectCountEvaluator) Handles(a admission.Attributes) bool {
	return a.GetSubresource() == "" && a.GetOperation() == admission.Create
}

func (o *objectCountEvaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return matches(q, item, o.MatchingResources, noScopes)
}

func (o *objectCountEvaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, o.names)
}

func (o *objectCountEvaluator) MatchingScopes(runtime.Object, []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (o *objectCountEvaluator) UncoveredQuotaScopes(_, _ []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	return []corev1.ScopedResourceSelectorRequirement{}, nil
}

func (o *objectCountEvaluator) Usage(runtime.Object) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, name := range o.names {
		out[name] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return out, nil
}

func (o *objectCountEvaluator) UsageStats(opts quota.UsageStatsOptions) (quota.UsageStats, error) {
	return usageStats(opts, o.list, noScopes, o.Usage)
}

// scopeFunc reports whether an object falls in a quota's scope.
type scopeFunc func(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error)

func noScopes(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error) {
	return false, nil
}

// ScopeSelectors are a quota's scopes and scope selector as one list of
// requirements (a scope is "Exists").
func ScopeSelectors(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, scope := range q.Spec.Scopes {
		out = append(out, corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		out = append(out, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return out
}

// matches is kube's generic.Matches: the quota limits one of the
// evaluator's resources, and item is in every one of its scopes.
func matches(q *corev1.ResourceQuota, item runtime.Object, matching func([]corev1.ResourceName) []corev1.ResourceName, inScope scopeFunc) (bool, error) {
	if q == nil {
		return false, fmt.Errorf("expected non-nil quota")
	}
	matchResource := len(matching(quota.ResourceNames(q.Status.Hard))) > 0
	matchScope := true
	for _, scope := range ScopeSelectors(q) {
		in, err := inScope(scope, item)
		if err != nil {
			return false, err
		}
		matchScope = matchScope && in
	}
	return matchResource && matchScope, nil
}

// matchingScopes returns the selectors item falls in.
func matchingScopes(item runtime.Object, selectors []corev1.ScopedResourceSelectorRequirement, inScope scopeFunc) ([]corev1.ScopedResourceSelectorRequirement, error) {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, s := range selectors {
		in, err := inScope(s, item)
		if err != nil {
			return []corev1.ScopedResourceSelectorRequirement{}, fmt.Errorf("error on matching scope %v: %w", s, err)
		}
		if in {
			out = append(out, s)
		}
	}
	return out, nil
}

// uncoveredScopes returns the limited scopes no matched quota scope has.
func uncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	out := []corev1.ScopedResourceSelectorRequirement{}
	for _, l := range limited {
		covered := false
		for _, m := range matched {
			if m.ScopeName == l.ScopeName {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, l)
		}
	}
	return out
}

// usageStats is kube's generic.CalculateUsageStats: the sum of the usage
// of the namespace's objects in the quota's scopes. As kube's, an error
// matching a scope ends the sum early without failing.
func usageStats(opts quota.UsageStatsOptions, list ListFunc, inScope scopeFunc, usage func(runtime.Object) (corev1.ResourceList, error)) (quota.UsageStats, error) {
	result := quota.UsageStats{Used: corev1.ResourceList{}}
	for _, name := range opts.Resources {
		result.Used[name] = resource.Quantity{Format: resource.DecimalSI}
	}
	items, err := list(opts.Namespace)
	if err != nil {
		return result, fmt.Errorf("failed to list content: %w", err)
	}
	selectors := []corev1.ScopedResourceSelectorRequirement{}
	for _, scope := range opts.Scopes {
		selectors = append(selectors, corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: corev1.ScopeSelectorOpExists})
	}
	if opts.ScopeSelector != nil {
		selectors = append(selectors, opts.ScopeSelector.MatchExpressions...)
	}
	for _, item := range items {
		in := true
		for _, s := range selectors {
			ok, err := inScope(s, item)
			if err != nil {
				return result, nil
			}
			in = in && ok
		}
		if !in {
			continue
		}
		u, err := usage(item)
		if err != nil {
			return result, err
		}
		result.Used = quota.Add(result.Used, u)
	}
	return result, nil
}

// selectorMatches reports whether a scope selector with operator In,
// NotIn, Exists or DoesNotExist selects the label set m.
func selectorMatches(s corev1.ScopedResourceSelectorRequirement, m labels.Set) (bool, error) {
	sel, err := scopeSelectorAsLabels(s)
	if err != nil {
		return false, err
	}
	return sel.Matches(m), nil
}
