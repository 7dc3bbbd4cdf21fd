// Package authz decides whether a user may do what a request asks: the
// chain of authorizers of --authorization-mode or --authorization-config
// (k8s.io/apiserver's authorizer.Authorizer contract: Node, RBAC, remote
// webhooks, AlwaysAllow, AlwaysDeny), behind a first authorizer that lets
// the system:masters group do everything, as kube-apiserver's, replaceable
// while the server serves (Reloadable); and the Forbidden Status a refusal
// is answered with.
//
// Layers: part of pkg/apiserver; the filters call it, nothing here knows
// HTTP.
package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Mode is one value of --authorization-mode.
type Mode string

// The modes this server knows, each with the case that builds it in the
// command's wiring (cmd/miniapiserver/app).
const (
	ModeAlwaysAllow Mode = "AlwaysAllow"
	ModeAlwaysDeny  Mode = "AlwaysDeny"
	ModeNode        Mode = "Node"
	ModeRBAC        Mode = "RBAC"
	ModeWebhook     Mode = "Webhook"
)

// knownModes lists the known modes, in the order --help shows them.
var knownModes = []Mode{ModeAlwaysAllow, ModeAlwaysDeny, ModeRBAC, ModeNode, ModeWebhook}

// Name is the name kube gives the mode's authorizer in the chain, which
// prefixes its reasons ("alwaysdeny: Everything is forbidden.").
func (m Mode) Name() string { return strings.ToLower(string(m)) }

// KnownModes lists the known modes, in the order --help shows them.
func KnownModes() []Mode { return slices.Clone(knownModes) }

// ParseModes checks a --authorization-mode list as kube does.
func ParseModes(list []string) ([]Mode, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("at least one authorization-mode must be passed")
	}
	var modes []Mode
	for _, s := range list {
		m := Mode(s)
		if !slices.Contains(knownModes, m) {
			return nil, fmt.Errorf("authorization-mode %q is not a valid mode", s)
		}
		if slices.Contains(modes, m) {
			return nil, fmt.Errorf("authorization-mode %q has mode specified more than once", list)
		}
		modes = append(modes, m)
	}
	return modes, nil
}

// Named is an authorizer of the chain with the name its reasons carry.
type Named struct {
	Name       string
	Authorizer authorizer.Authorizer
}

// privilegedName is the name kube gives the system:masters authorizer.
const privilegedName = "kubernetes.io/system-privileged-group"

// New returns the chain kube-apiserver builds: system:masters may do
// everything, then each authorizer in order until one allows or denies.
func New(chain ...Named) authorizer.Authorizer {
	all := append([]Named{{Name: privilegedName, Authorizer: privilegedGroups{user.SystemPrivilegedGroup}}}, chain...)
	return union(all)
}

// union asks each authorizer in turn: the first Allow or Deny decides;
// when all have no opinion, the reasons are joined, each after its
// authorizer's name, as kube's union authorizer does.
type union []Named

func (u union) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	var errs []error
	var reasons []string
	for _, n := range u {
		decision, reason, err := n.Authorizer.Authorize(ctx, a)
		if err != nil {
			errs = append(errs, err)
		}
		if reason != "" {
			reasons = append(reasons, n.Name+": "+reason)
		}
		if decision == authorizer.DecisionAllow || decision == authorizer.DecisionDeny {
			return decision, reason, err
		}
	}
	return authorizer.DecisionNoOpinion, strings.Join(reasons, "\n"), utilerrors.NewAggregate(errs)
}

func (u union) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(u.Authorize(ctx, a))
}

func (union) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// privilegedGroups allows users of the groups everything.
type privilegedGroups []string

func (p privilegedGroups) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "Error", errors.New("no user on request.")
	}
	for _, g := range u.GetGroups() {
		if slices.Contains(p, g) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (p privilegedGroups) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(p.Authorize(ctx, a))
}

func (privilegedGroups) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}
