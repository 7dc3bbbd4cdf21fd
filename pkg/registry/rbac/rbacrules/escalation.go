package rbacrules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// ConfirmNoEscalation returns an error unless the user of ctx holds every
// permission rules grant, in the namespace of ctx (cluster-wide when
// none): kube's rule that a user cannot grant what it cannot do itself.
// The error lists what is missing, in kube's words.
func ConfirmNoEscalation(ctx context.Context, r *Resolver, rules []rbacv1.PolicyRule) error {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return errors.New("no user on context")
	}
	owned, resolveErr := r.RulesFor(ctx, u, request.NamespaceValue(ctx))
	if resolveErr != nil {
		// Rules only grant: what did resolve still counts.
		slog.Debug("rbac: resolving a user's rules", "user", u.GetName(), "error", resolveErr)
	}
	covered, missing := validation.Covers(owned, rules)
	if covered {
		return nil
	}
	seen := map[string]bool{}
	var lines []string
	for _, rule := range CompactRules(missing) {
		if s := CompactString(rule); !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	sort.Strings(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		u.GetName(), u.GetGroups(), strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{resolveErr})
	}
	return errors.New(msg)
}
