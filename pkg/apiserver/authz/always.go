package authz

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// AlwaysAllow is the AlwaysAllow mode: everything is allowed.
type AlwaysAllow struct{}

var (
	_ authorizer.Authorizer   = AlwaysAllow{}
	_ authorizer.RuleResolver = AlwaysAllow{}
	_ authorizer.Authorizer   = AlwaysDeny{}
	_ authorizer.RuleResolver = AlwaysDeny{}
)

// Authorize implements authorizer.Authorizer.
func (AlwaysAllow) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (a AlwaysAllow) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (AlwaysAllow) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: every verb on everything.
func (AlwaysAllow) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		false, nil
}

// AlwaysDeny is the AlwaysDeny mode: it has no opinion, with a reason, so
// that only the authorizers before it (system:masters) allow anything.
type AlwaysDeny struct{}

// Authorize implements authorizer.Authorizer.
func (AlwaysDeny) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, "Everything is forbidden.", nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (a AlwaysDeny) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer: there are none.
func (AlwaysDeny) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver: nothing.
func (AlwaysDeny) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{}, []authorizer.NonResourceRuleInfo{}, false, nil
}
