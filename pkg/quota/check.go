package quota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	resourcequotaapi "k8s.io/apiserver/pkg/admission/plugin/resourcequota/apis/resourcequota"
	quota "k8s.io/apiserver/pkg/quota/v1"
)

// CheckRequest is kube's resourcequota.CheckRequest: it checks the
// write a describes against quotas (the namespace's, as last read) and
// returns them as they would be once it is done (copies; the input is
// not changed), or the refusal (a 403 with kube's message). limited are
// the resources a configuration says must be covered by some quota.
func CheckRequest(quotas []corev1.ResourceQuota, a admission.Attributes, evaluator quota.Evaluator,
	limited []resourcequotaapi.LimitedResource) ([]corev1.ResourceQuota, error) {
	if !evaluator.Handles(a) {
		return quotas, nil
	}
	obj := a.GetObject()
	limitedScopes, err := matchedLimitedScopes(evaluator, a, limited)
	if err != nil {
		return quotas, nil // as kube: a configuration it cannot match limits nothing
	}
	limitedNames, err := limitedResourceNames(evaluator, a, limited)
	if err != nil {
		return quotas, err
	}
	m, err := matchQuotas(quotas, a, evaluator)
	if err != nil {
		return m.quotas, err
	}
	// The object's namespace is the request's: a usage that depends on
	// it must not read an empty one.
	if acc, err := meta.Accessor(obj); err == nil && a.GetNamespace() != "" && acc.GetNamespace() == "" {
		acc.SetNamespace(a.GetNamespace())
	}
	deltas, deltaNoQuota, err := deltaUsage(quotas, m.indexes, a, evaluator)
	if err != nil {
		return quotas, err
	}
	if len(m.indexes) != 0 && len(deltas) == 0 || len(m.indexes) == 0 && len(quota.RemoveZeros(deltaNoQuota)) == 0 {
		return quotas, nil
	}
	if uncovered := limitedNames.Difference(m.restricted); len(uncovered) > 0 {
		return quotas, admission.NewForbidden(a, fmt.Errorf("insufficient quota to consume: %v", strings.Join(sets.List(uncovered), ",")))
	}
	uncoveredScopes, err := evaluator.UncoveredQuotaScopes(limitedScopes, m.scopes)
	if err != nil {
		return quotas, err
	}
	if len(uncoveredScopes) > 0 {
		return quotas, fmt.Errorf("insufficient quota to match these scopes: %v", uncoveredScopes)
	}
	if len(m.indexes) == 0 {
		return quotas, nil
	}
	return charge(quotas, m.indexes, deltas, a)
}

// matchedLimitedScopes are the scopes of limited the object falls in.
func matchedLimitedScopes(evaluator quota.Evaluator, a admission.Attributes, limited []resourcequotaapi.LimitedResource) ([]corev1.ScopedResourceSelectorRequirement, error) {
	scopes := []corev1.ScopedResourceSelectorRequirement{}
	for _, l := range limited {
		matched, err := evaluator.MatchingScopes(a.GetObject(), l.MatchScopes)
		if err != nil {
			return nil, err
		}
		scopes = append(scopes, matched...)
	}
	return scopes, nil
}

// limitedResourceNames are the resources the object uses that limited
// (for its resource) says must be covered by a quota.
func limitedResourceNames(evaluator quota.Evaluator, a admission.Attributes, limited []resourcequotaapi.LimitedResource) (sets.Set[string], error) {
	names := sets.New[string]()
	gr := a.GetResource().GroupResource()
	var mine []resourcequotaapi.LimitedResource
	for _, l := range limited {
		if (schema.GroupResource{Group: l.APIGroup, Resource: l.Resource}) == gr {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return names, nil
	}
	usage, err := evaluator.Usage(a.GetObject())
	if err != nil {
		return nil, err
	}
	for _, l := range mine {
		for name, q := range usage {
			if q.Sign() != 1 {
				continue
			}
			for _, contains := range l.MatchContains {
				if strings.Contains(string(name), contains) {
					names.Insert(string(name))
					break
				}
			}
		}
	}
	return names, nil
}

// matchedQuotas are the quotas a request is charged to.
type matchedQuotas struct {
	// quotas are what to return with an error that is not a refusal.
	quotas  []corev1.ResourceQuota
	indexes []int
	// restricted are the resources those quotas limit; scopes the quota
	// scopes the object falls in.
	restricted sets.Set[string]
	scopes     []corev1.ScopedResourceSelectorRequirement
}

// matchQuotas finds the quotas that apply to the object, refusing it
// when it breaks their constraints or one has no usage yet.
func matchQuotas(quotas []corev1.ResourceQuota, a admission.Attributes, evaluator quota.Evaluator) (matchedQuotas, error) {
	obj := a.GetObject()
	m := matchedQuotas{restricted: sets.New[string](), scopes: []corev1.ScopedResourceSelectorRequirement{}}
	for i := range quotas {
		q := &quotas[i]
		scopes, err := evaluator.MatchingScopes(obj, ScopeSelectors(q))
		if err != nil {
			return m, fmt.Errorf("error matching scopes of quota %s, err: %w", q.Name, err)
		}
		m.scopes = append(m.scopes, scopes...)
		match, err := evaluator.Matches(q, obj)
		if err != nil {
			m.quotas = quotas
			return m, err
		}
		if !match {
			continue
		}
		restricted := evaluator.MatchingResources(quota.ResourceNames(q.Status.Hard))
		if err := evaluator.Constraints(restricted, obj); err != nil {
			return m, admission.NewForbidden(a, fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		if !hasUsageStats(q, restricted) {
			return m, admission.NewForbidden(a, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, prettyPrintNames(restricted)))
		}
		m.indexes = append(m.indexes, i)
		for _, name := range restricted {
			m.restricted.Insert(string(name))
		}
	}
	return m, nil
}

// deltaUsage is what the request adds to each matched quota (by index,
// zero entries dropped), and what it adds when no quota matched. An
// update is charged the difference with the old object (never less
// than nothing) in the quotas the old object was in too.
func deltaUsage(quotas []corev1.ResourceQuota, indexes []int, a admission.Attributes, evaluator quota.Evaluator) (map[int]corev1.ResourceList, corev1.ResourceList, error) {
	usage, err := evaluator.Usage(a.GetObject())
	if err != nil {
		return nil, nil, err
	}
	if negative := quota.IsNegative(usage); len(negative) > 0 {
		return nil, nil, admission.NewForbidden(a, fmt.Errorf("quota usage is negative for resource(s): %s", prettyPrintNames(negative)))
	}
	deltas := make(map[int]corev1.ResourceList, len(indexes))
	for _, i := range indexes {
		deltas[i] = usage
	}
	var noQuota corev1.ResourceList
	if a.GetOperation() == admission.Create && len(indexes) == 0 {
		noQuota = usage
	}
	if a.GetOperation() == admission.Update {
		old := a.GetOldObject()
		if old == nil {
			return nil, nil, admission.NewForbidden(a, fmt.Errorf("unable to get previous usage since prior version of object was not found"))
		}
		if acc, err := meta.Accessor(old); err == nil {
			if acc.GetResourceVersion() == "" { // a create on update: charge it all
				if len(indexes) == 0 {
					noQuota = usage
				}
			} else if noQuota, err = updateDeltas(quotas, indexes, deltas, usage, old, evaluator); err != nil {
				return nil, nil, err
			}
		}
	}
	for i := range deltas {
		if deltas[i] = quota.RemoveZeros(deltas[i]); len(deltas[i]) == 0 {
			delete(deltas, i)
		}
	}
	return deltas, noQuota, nil
}

// updateDeltas charges an update the growth from old in the quotas old
// was charged to as well; it returns the growth.
func updateDeltas(quotas []corev1.ResourceQuota, indexes []int, deltas map[int]corev1.ResourceList, usage corev1.ResourceList,
	old runtime.Object, evaluator quota.Evaluator) (corev1.ResourceList, error) {
	prev, err := evaluator.Usage(old)
	if err != nil {
		return nil, err
	}
	growth := quota.SubtractWithNonNegativeResult(usage, prev)
	for _, i := range indexes {
		match, err := evaluator.Matches(&quotas[i], old)
		if err != nil {
			return nil, err
		}
		if match {
			deltas[i] = growth
		}
	}
	return growth, nil
}

// charge adds each delta to its quota's used, refusing the request when
// that goes over a hard limit (except on a status write, which kube lets
// through: it only replenishes).
func charge(quotas []corev1.ResourceQuota, indexes []int, deltas map[int]corev1.ResourceList, a admission.Attributes) ([]corev1.ResourceQuota, error) {
	out := make([]corev1.ResourceQuota, len(quotas))
	for i := range quotas {
		out[i] = *quotas[i].DeepCopy()
	}
	for _, i := range indexes {
		q := &out[i]
		delta, ok := deltas[i]
		if !ok {
			continue
		}
		requested := quota.Mask(delta, quota.ResourceNames(q.Status.Hard))
		used := quota.Add(q.Status.Used, requested)
		if a.GetSubresource() != "status" {
			if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.ResourceNames(requested)), q.Status.Hard); !ok {
				return nil, admission.NewForbidden(a, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					prettyPrint(quota.Mask(requested, exceeded)), prettyPrint(quota.Mask(q.Status.Used, exceeded)),
					prettyPrint(quota.Mask(q.Status.Hard, exceeded))))
			}
		}
		q.Status.Used = used
	}
	return out, nil
}

// hasUsageStats: the quota has a used value for each of resources it
// limits; until its controller has counted them, the quota refuses.
func hasUsageStats(q *corev1.ResourceQuota, resources []corev1.ResourceName) bool {
	interesting := quota.ToSet(resources)
	for name := range q.Status.Hard {
		if !interesting.Has(string(name)) {
			continue
		}
		if _, ok := q.Status.Used[name]; !ok {
			return false
		}
	}
	return true
}

// prettyPrint is name=quantity, sorted by name, comma separated.
func prettyPrint(list corev1.ResourceList) string {
	keys := make([]string, 0, len(list))
	for k := range list {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		q := list[corev1.ResourceName(k)]
		parts = append(parts, k+"="+q.String())
	}
	return strings.Join(parts, ",")
}

func prettyPrintNames(names []corev1.ResourceName) string {
	values := make([]string, 0, len(names))
	for _, n := range names {
		values = append(values, string(n))
	}
	sort.Strings(values)
	return strings.Join(values, ",")
}
