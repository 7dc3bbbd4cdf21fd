package authz

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
)

// With an empty cache, RBAC has no opinion; behind system:masters and
// with other modes, the chain decides as kube's.
func TestChainWithRBAC(t *testing.T) {
	rbac := NewRBAC(rbacrules.NewCache())
	pods := func(u user.Info) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Resource: "pods", Namespace: "ns", ResourceRequest: true}
	}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	for _, tc := range []struct {
		name       string
		chain      []Named
		attrs      authorizer.AttributesRecord
		want       authorizer.Decision
		wantReason string
	}{
		{"masters pass RBAC", []Named{{"rbac", rbac}}, pods(admin), authorizer.DecisionAllow, ""},
		{"rbac without bindings", []Named{{"rbac", rbac}}, pods(alice), authorizer.DecisionNoOpinion, ""},
		{"reasons joined", []Named{{"alwaysdeny", AlwaysDeny{}}, {"rbac", rbac}}, pods(alice), authorizer.DecisionNoOpinion, "alwaysdeny: Everything is forbidden."},
		{"the first allow decides", []Named{{"rbac", rbac}, {"alwaysallow", AlwaysAllow{}}}, pods(alice), authorizer.DecisionAllow, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := New(tc.chain...).Authorize(context.Background(), tc.attrs)
			if d != tc.want || reason != tc.wantReason || err != nil {
				t.Errorf("got %v %q %v, want %v %q", d, reason, err, tc.want, tc.wantReason)
			}
		})
	}
}

func TestRuleResolvers(t *testing.T) {
	resolvers := RuleResolvers{NewRBAC(rbacrules.NewCache()), AlwaysAllow{}, AlwaysDeny{}}
	res, non, incomplete, err := resolvers.RulesFor(context.Background(), &user.DefaultInfo{Name: "alice"}, "ns")
	if err != nil || incomplete || len(res) != 1 || len(non) != 1 || res[0].GetVerbs()[0] != "*" {
		t.Errorf("got %v %v %v %v", res, non, incomplete, err)
	}
}
