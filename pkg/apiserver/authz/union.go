package authz

import (
	"context"
	"fmt"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// named is an authorizer of a union, with the name its reasons carry
// ("rbac", "node": kube names each mode by its lower-cased name).
type named struct {
	name       string
	authorizer authorizer.Authorizer
}

// union asks its authorizers in order: the first Allow or Deny decides,
// with that authorizer's reason; when all have no opinion, the reasons
// given are joined, each prefixed by its authorizer's name, as kube's
// union does (a 403 then reads "...: rbac: RBAC: clusterrole ... not
// found").
type union struct {
	unconditional
	chain []named
}

func newUnion(chain []named) *union {
	u := &union{chain: chain}
	u.unconditional = unconditional{u.authorize}
	return u
}

func (u *union) authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	var (
		errs    []error
		reasons []string
	)
	for _, n := range u.chain {
		decision, reason, err := n.authorizer.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, fmt.Sprintf("%s: %s", n.name, reason))
		}
		if decision == authorizer.DecisionAllow || decision == authorizer.DecisionDeny {
			return decision, reason, err
		}
	}
	return authorizer.DecisionNoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

// ruleResolvers lists the rules of every resolver: a user may do what any
// of them allows.
type ruleResolvers []authorizer.RuleResolver

func (r ruleResolvers) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
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
