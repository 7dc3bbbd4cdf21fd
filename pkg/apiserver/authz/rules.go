package authz

import (
	"context"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RuleResolvers is the rule resolver of a chain of modes (kube's union of
// rule resolvers): a user may do what any of them lists. It answers
// SelfSubjectRulesReview (kubectl auth can-i --list); system:masters is
// not in it, as it is not in kube's.
type RuleResolvers []authorizer.RuleResolver

var _ authorizer.RuleResolver = RuleResolvers(nil)

// RulesFor implements authorizer.RuleResolver.
func (r RuleResolvers) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	var (
		errs        []error
		resources   []authorizer.ResourceRuleInfo
		nonResource []authorizer.NonResourceRuleInfo
		incomplete  bool
	)
	for _, resolver := range r {
		res, non, inc, err := resolver.RulesFor(ctx, u, namespace)
		incomplete = incomplete || inc
		if err != nil {
			errs = append(errs, err)
		}
		resources = append(resources, res...)
		nonResource = append(nonResource, non...)
	}
	return resources, nonResource, incomplete, utilerrors.NewAggregate(errs)
}
