package rbacrules

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RoleGetter finds the roles that bindings refer to.
type RoleGetter interface {
	GetRole(ctx context.Context, namespace, name string) (*rbacv1.Role, error)
	GetClusterRole(ctx context.Context, name string) (*rbacv1.ClusterRole, error)
}

// Resolver finds the rules that apply to a user, as kube's
// DefaultRuleResolver: those of the roles referred to by the
// ClusterRoleBindings naming the user (or one of its groups, or its
// service account), then by the RoleBindings of the namespace asked about.
type Resolver struct {
	cache *Cache
	roles RoleGetter
}

// NewResolver returns a resolver of the bindings in cache, whose roles
// come from roles (nil: from cache too).
func NewResolver(cache *Cache, roles RoleGetter) *Resolver {
	if roles == nil {
		roles = cache
	}
	return &Resolver{cache: cache, roles: roles}
}

// Visitor is called with each rule that applies, and where it comes from
// (source.String() is kube's description of the binding); or with each
// error met resolving a role (rule and source nil). Returning false stops
// the visit.
type Visitor func(source fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool

// VisitRulesFor calls visitor with the rules that apply to u in
// namespace ns ("" for cluster-wide rules only), cluster bindings first.
func (r *Resolver) VisitRulesFor(ctx context.Context, u user.Info, ns string, visitor Visitor) {
	var buf [8]match
	for _, m := range r.cache.matches(u, ns, buf[:0]) {
		rules, err := r.GetRoleReferenceRules(ctx, m.binding.roleRef, m.binding.namespace)
		if err != nil {
			if !visitor(nil, nil, err) {
				return
			}
			continue
		}
		for i := range rules {
			if !visitor(m.binding.sources[m.subject], &rules[i], nil) {
				return
			}
		}
	}
}

// FirstAllowing returns the source (see Visitor) of the first rule that
// applies to the user of a in its namespace and allows a, or nil, and the
// errors met resolving roles on the way: VisitRulesFor with RuleAllows,
// without the cost of a visitor, for the authorizer.
func (r *Resolver) FirstAllowing(ctx context.Context, a authorizer.Attributes) (fmt.Stringer, []error) {
	var (
		buf  [8]match
		errs []error
	)
	for _, m := range r.cache.matches(a.GetUser(), a.GetNamespace(), buf[:0]) {
		rules, err := r.GetRoleReferenceRules(ctx, m.binding.roleRef, m.binding.namespace)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range rules {
			if RuleAllows(a, &rules[i]) {
				return m.binding.sources[m.subject], errs
			}
		}
	}
	return nil, errs
}

// RulesFor returns every rule that applies to u in ns. With an error, the
// rules are those that could be resolved: rules only grant, so a decision
// may still rest on them.
func (r *Resolver) RulesFor(ctx context.Context, u user.Info, ns string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	r.VisitRulesFor(ctx, u, ns, func(_ fmt.Stringer, rule *rbacv1.PolicyRule, err error) bool {
		if rule != nil {
			rules = append(rules, *rule)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return true
	})
	return rules, utilerrors.NewAggregate(errs)
}

// GetRoleReferenceRules returns the rules of the role a binding in
// namespace ns ("" for a ClusterRoleBinding) refers to.
func (r *Resolver) GetRoleReferenceRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		role, err := r.roles.GetRole(ctx, ns, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	case "ClusterRole":
		role, err := r.roles.GetClusterRole(ctx, ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
}
