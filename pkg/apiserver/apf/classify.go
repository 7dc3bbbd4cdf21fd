package apf

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// matches reports whether a request of u, addressing info, is one of
// fs's: some rule names one of u's subjects and a resource rule (for a
// resource request) or a non-resource rule (for the others) covers it.
func matches(fs *flowcontrolv1.FlowSchema, u user.Info, info *request.Info) bool {
	for _, rule := range fs.Spec.Rules {
		if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(s, u) }) {
			continue
		}
		if info.IsResourceRequest {
			if slices.ContainsFunc(rule.ResourceRules, func(r flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(r, info) }) {
				return true
			}
			continue
		}
		if slices.ContainsFunc(rule.NonResourceRules, func(r flowcontrolv1.NonResourcePolicyRule) bool { return matchesNonResourceRule(r, info) }) {
			return true
		}
	}
	return false
}

const serviceAccountPrefix = "system:serviceaccount:"

func matchesSubject(s flowcontrolv1.Subject, u user.Info) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == u.GetName())
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(u.GetGroups(), s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		rest, ok := strings.CutPrefix(u.GetName(), serviceAccountPrefix+s.ServiceAccount.Namespace+":")
		if !ok || rest == "" || strings.Contains(rest, ":") {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == rest
	}
	return false
}

// matchesResourceRule: the verb, group and resource (with its
// subresource, "pods/status") are listed or "*"; a cluster-scoped
// request (no namespace) needs clusterScope, a namespaced one its
// namespace or "*".
func matchesResourceRule(r flowcontrolv1.ResourcePolicyRule, info *request.Info) bool {
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	if !listed(r.Verbs, info.Verb, flowcontrolv1.VerbAll) || !listed(r.APIGroups, info.APIGroup, flowcontrolv1.APIGroupAll) ||
		!listed(r.Resources, resource, flowcontrolv1.ResourceAll) {
		return false
	}
	if info.Namespace == "" {
		return r.ClusterScope
	}
	return listed(r.Namespaces, info.Namespace, flowcontrolv1.NamespaceEvery)
}

// matchesNonResourceRule: the verb is listed, and the path is, or is
// under a listed "prefix/*", or "*" is listed.
func matchesNonResourceRule(r flowcontrolv1.NonResourcePolicyRule, info *request.Info) bool {
	if !listed(r.Verbs, info.Verb, flowcontrolv1.VerbAll) {
		return false
	}
	for _, u := range r.NonResourceURLs {
		if u == flowcontrolv1.NonResourceAll || u == info.Path {
			return true
		}
		if prefix, ok := strings.CutSuffix(u, "*"); ok && strings.HasPrefix(info.Path, prefix) {
			return true
		}
	}
	return false
}

func listed(list []string, v, all string) bool {
	return slices.Contains(list, v) || slices.Contains(list, all)
}

// distinguisher is the flow of a request within its schema: the user,
// the namespace, or one flow for all.
func distinguisher(fs *flowcontrolv1.FlowSchema, u user.Info, info *request.Info) string {
	if fs.Spec.DistinguisherMethod == nil {
		return ""
	}
	switch fs.Spec.DistinguisherMethod.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return u.GetName()
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return info.Namespace
	}
	return ""
}
