package authz

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// unconditional gives an authorizer that knows nothing of conditions the
// two methods kube requires of it.
type unconditional struct {
	authorize func(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error)
}

func (u unconditional) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return u.authorize(ctx, a)
}

func (u unconditional) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(u.authorize(ctx, a))
}

func (unconditional) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// alwaysAllow allows every request, and says every user may do anything.
type alwaysAllow struct{ unconditional }

func newAlwaysAllow() alwaysAllow {
	return alwaysAllow{unconditional{func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	}}}
}

func (alwaysAllow) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{&authorizer.DefaultResourceRuleInfo{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		[]authorizer.NonResourceRuleInfo{&authorizer.DefaultNonResourceRuleInfo{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		false, nil
}

// alwaysDeny has no opinion on any request, with kube's reason.
type alwaysDeny struct{ unconditional }

func newAlwaysDeny() alwaysDeny {
	return alwaysDeny{unconditional{func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionNoOpinion, "Everything is forbidden.", nil
	}}}
}

func (alwaysDeny) RulesFor(context.Context, user.Info, string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return []authorizer.ResourceRuleInfo{}, []authorizer.NonResourceRuleInfo{}, false, nil
}

// privilegedGroup allows every request of a member of group: kube puts
// system:masters first in every chain, whatever the modes.
func privilegedGroup(group string) unconditional {
	return unconditional{func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		u := a.GetUser()
		if u == nil {
			return authorizer.DecisionNoOpinion, "Error", errors.New("no user on request.")
		}
		if slices.Contains(u.GetGroups(), group) {
			return authorizer.DecisionAllow, "", nil
		}
		return authorizer.DecisionNoOpinion, "", nil
	}}
}
