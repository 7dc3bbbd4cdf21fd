package authz

import (
	"context"
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
)

// RBAC is kube's RBAC authorizer (the RBAC mode): a request is allowed
// when a rule of a role bound to its user allows it; otherwise it has no
// opinion, with a reason naming the roles that could not be found, if
// any. It reads roles and bindings from the registry's policy cache, never
// from storage.
type RBAC struct {
	resolver *rbacrules.Resolver
}

var (
	_ authorizer.Authorizer   = (*RBAC)(nil)
	_ authorizer.RuleResolver = (*RBAC)(nil)
)

// NewRBAC returns the RBAC authorizer of the roles and bindings in cache.
func NewRBAC(cache *rbacrules.Cache) *RBAC {
	return &RBAC{resolver: rbacrules.NewResolver(cache, nil)}
}

// Authorize implements authorizer.Authorizer.
func (r *RBAC) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser() == nil {
		return authorizer.DecisionNoOpinion, "", nil
	}
	allowedBy, errs := r.resolver.FirstAllowing(ctx, a)
	if allowedBy != nil {
		return authorizer.DecisionAllow, "RBAC: allowed by " + allowedBy.String(), nil
	}
	if len(errs) > 0 {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("RBAC: %v", utilerrors.NewAggregate(errs)), nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer: RBAC has no
// conditions.
func (r *RBAC) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(r.Authorize(ctx, a))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (*RBAC) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: the rules of every role
// bound to u in namespace, split into resource and non-resource rules.
func (r *RBAC) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	var (
		resources   []authorizer.ResourceRuleInfo
		nonResource []authorizer.NonResourceRuleInfo
	)
	rules, err := r.resolver.RulesFor(ctx, u, namespace)
	for _, rule := range rules {
		if len(rule.Resources) > 0 {
			resources = append(resources, &authorizer.DefaultResourceRuleInfo{
				Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames,
			})
		}
		if len(rule.NonResourceURLs) > 0 {
			nonResource = append(nonResource, &authorizer.DefaultNonResourceRuleInfo{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
		}
	}
	return resources, nonResource, false, err
}
