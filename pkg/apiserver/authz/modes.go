package authz

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/policy"
)

// The modes of --authorization-mode.
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeRBAC        = "RBAC"
)

// Modes are the modes this server knows, in kube's spelling.
var Modes = []string{ModeAlwaysAllow, ModeAlwaysDeny, ModeRBAC}

// ValidateModes checks a --authorization-mode list with kube's messages.
func ValidateModes(modes []string) error {
	if len(modes) == 0 {
		return fmt.Errorf("at least one authorization-mode must be passed")
	}
	for i, m := range modes {
		if !slices.Contains(Modes, m) {
			return fmt.Errorf("authorization-mode %q is not a valid mode", m)
		}
		if slices.Contains(modes[:i], m) {
			return fmt.Errorf("authorization-mode %q has mode specified more than once", modes)
		}
	}
	return nil
}

// Config builds the server's authorizer.
type Config struct {
	// Modes are the authorizers, in order (--authorization-mode).
	Modes []string
	// Policy is the cache of roles and bindings RBAC decides with.
	Policy *policy.Cache
}

// New returns the server's authorizer and rule resolver: system:masters
// first, then the modes in order, as kube-apiserver builds them. The rule
// resolver (SelfSubjectRulesReview, kubectl auth can-i --list) lists the
// rules of the modes only, as kube's does.
func New(cfg Config) (authorizer.Authorizer, authorizer.RuleResolver, error) {
	if err := ValidateModes(cfg.Modes); err != nil {
		return nil, nil, err
	}
	chain := []named{{name: "kubernetes.io/system-privileged-group", authorizer: privilegedGroup(user.SystemPrivilegedGroup)}}
	var resolvers ruleResolvers
	for _, mode := range cfg.Modes {
		var a interface {
			authorizer.Authorizer
			authorizer.RuleResolver
		}
		switch mode {
		case ModeAlwaysAllow:
			a = newAlwaysAllow()
		case ModeAlwaysDeny:
			a = newAlwaysDeny()
		case ModeRBAC:
			if cfg.Policy == nil {
				return nil, nil, fmt.Errorf("authorization mode RBAC needs the policy cache")
			}
			a = NewRBAC(cfg.Policy)
		}
		chain = append(chain, named{name: strings.ToLower(mode), authorizer: a})
		resolvers = append(resolvers, a)
	}
	return newUnion(chain), resolvers, nil
}
