package rbacrules

import (
	"fmt"
	"reflect"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RuleAllows reports whether rule grants the request a describes, with
// kube's matching: "*" matches any verb, group, resource or URL; a
// resource "*/scale" matches that subresource of any resource; a rule
// without resourceNames matches every name; a non-resource URL ending in
// "*" matches every path with that prefix.
func RuleAllows(a authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !verbMatches(rule, a.GetVerb()) {
		return false
	}
	if !a.IsResourceRequest() {
		return urlMatches(rule, a.GetPath())
	}
	resource, sub := a.GetResource(), a.GetSubresource()
	if sub != "" {
		resource += "/" + sub
	}
	return groupMatches(rule, a.GetAPIGroup()) &&
		resourceMatches(rule, resource, sub) &&
		nameMatches(rule, a.GetName())
}

// RulesAllow reports whether any of rules grants the request.
func RulesAllow(a authorizer.Attributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

func verbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	for _, v := range rule.Verbs {
		if v == rbacv1.VerbAll || v == verb {
			return true
		}
	}
	return false
}

func groupMatches(rule *rbacv1.PolicyRule, group string) bool {
	for _, g := range rule.APIGroups {
		if g == rbacv1.APIGroupAll || g == group {
			return true
		}
	}
	return false
}

// resourceMatches matches "resource" or "resource/subresource" (combined),
// and "*/subresource" against the request's subresource.
func resourceMatches(rule *rbacv1.PolicyRule, combined, sub string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == combined {
			return true
		}
		if sub != "" && len(r) == len(sub)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, sub) {
			return true
		}
	}
	return false
}

func nameMatches(rule *rbacv1.PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

func urlMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}

// CompactString is how kube's escalation errors print a rule:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}, naming
// only the fields that are set.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, values []string) {
		if len(values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, values))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}

// simpleResource identifies a rule on one group and one resource (and at
// most one name), which CompactRules merges with others of the same
// resource.
type simpleResource struct {
	group, resource string
	hasName         bool
	name            string
}

// CompactRules merges rules on a single group and resource (and at most
// one name) that differ only by verb, as kube does before it reports the
// permissions a user lacks: the rules Covers returns are one verb each.
// The merged rules come after the others, in first-seen order.
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	merged := map[simpleResource]*rbacv1.PolicyRule{}
	var order []simpleResource
	for _, r := range rules {
		key, simple := isSimple(&r)
		if !simple {
			out = append(out, r)
			continue
		}
		if m, ok := merged[key]; ok {
			m.Verbs = append(m.Verbs, r.Verbs...)
			continue
		}
		merged[key] = r.DeepCopy()
		order = append(order, key)
	}
	for _, key := range order {
		out = append(out, *merged[key])
	}
	return out
}

func isSimple(r *rbacv1.PolicyRule) (simpleResource, bool) {
	if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
		return simpleResource{}, false
	}
	only := &rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
	if !reflect.DeepEqual(only, r) {
		return simpleResource{}, false
	}
	key := simpleResource{group: r.APIGroups[0], resource: r.Resources[0]}
	if len(r.ResourceNames) == 1 {
		key.hasName, key.name = true, r.ResourceNames[0]
	}
	return key, true
}
