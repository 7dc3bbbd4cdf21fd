package authz

import (
	"context"
	"sync/atomic"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Reloadable is the server's authorizer and rule resolver when its chain
// may be replaced while requests are served (--authorization-config is
// read again when it changes): each request asks the chain current when
// it arrives.
type Reloadable struct {
	current atomic.Pointer[chain]
}

type chain struct {
	authorizer authorizer.Authorizer
	resolver   authorizer.RuleResolver
}

var (
	_ authorizer.Authorizer   = (*Reloadable)(nil)
	_ authorizer.RuleResolver = (*Reloadable)(nil)
)

// NewReloadable starts with the chain a and its rule resolver r.
func NewReloadable(a authorizer.Authorizer, r authorizer.RuleResolver) *Reloadable {
	var l Reloadable
	l.Set(a, r)
	return &l
}

// Set replaces the chain; requests in flight finish with the old one.
func (l *Reloadable) Set(a authorizer.Authorizer, r authorizer.RuleResolver) {
	l.current.Store(&chain{authorizer: a, resolver: r})
}

// Authorize implements authorizer.Authorizer.
func (l *Reloadable) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	return l.current.Load().authorizer.Authorize(ctx, a)
}

// ConditionsAwareAuthorize implements authorizer.Authorizer.
func (l *Reloadable) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return l.current.Load().authorizer.ConditionsAwareAuthorize(ctx, a)
}

// EvaluateConditions implements authorizer.Authorizer.
func (l *Reloadable) EvaluateConditions(ctx context.Context, d authorizer.ConditionsAwareDecision, data authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return l.current.Load().authorizer.EvaluateConditions(ctx, d, data)
}

// RulesFor implements authorizer.RuleResolver.
func (l *Reloadable) RulesFor(ctx context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	return l.current.Load().resolver.RulesFor(ctx, u, namespace)
}
