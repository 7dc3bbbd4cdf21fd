package authz

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/policy"
)

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		modes []string
		want  string
	}{
		{nil, "at least one authorization-mode must be passed"},
		{[]string{"RBAC", "ABAC"}, `authorization-mode "ABAC" is not a valid mode`},
		{[]string{"RBAC", "AlwaysDeny", "RBAC"}, `authorization-mode ["RBAC" "AlwaysDeny" "RBAC"] has mode specified more than once`},
		{[]string{"AlwaysDeny", "RBAC"}, ""},
	} {
		err := ValidateModes(tc.modes)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%q: got %q, want %q", tc.modes, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%q: no error, want %q", tc.modes, tc.want)
		}
	}
}

// An empty cache with kube's modes: system:masters first, then each mode
// in order, the reasons of those without an opinion joined with their
// names.
func TestUnionDecisions(t *testing.T) {
	cache := policy.NewCache()
	pods := func(u user.Info) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Resource: "pods", Namespace: "ns", ResourceRequest: true}
	}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	for _, tc := range []struct {
		name        string
		modes       []string
		attrs       authorizer.AttributesRecord
		want        authorizer.Decision
		wantReason  string
		wantErrText string
	}{
		{"masters pass anything", []string{"AlwaysDeny"}, pods(admin), authorizer.DecisionAllow, "", ""},
		{"always deny has no opinion", []string{"AlwaysDeny"}, pods(alice), authorizer.DecisionNoOpinion, "alwaysdeny: Everything is forbidden.", ""},
		{"rbac without bindings", []string{"RBAC"}, pods(alice), authorizer.DecisionNoOpinion, "", ""},
		{"reasons joined", []string{"AlwaysDeny", "RBAC"}, pods(alice), authorizer.DecisionNoOpinion, "alwaysdeny: Everything is forbidden.", ""},
		{"the first allow decides", []string{"RBAC", "AlwaysAllow"}, pods(alice), authorizer.DecisionAllow, "", ""},
		{"no user", []string{"RBAC"}, authorizer.AttributesRecord{Verb: "get", Path: "/"}, authorizer.DecisionNoOpinion, "kubernetes.io/system-privileged-group: Error", "no user on request."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := New(Config{Modes: tc.modes, Policy: cache})
			if err != nil {
				t.Fatal(err)
			}
			d, reason, err := a.Authorize(context.Background(), tc.attrs)
			errText := ""
			if err != nil {
				errText = err.Error()
			}
			if d != tc.want || reason != tc.wantReason || errText != tc.wantErrText {
				t.Errorf("got %v %q %q, want %v %q %q", d, reason, errText, tc.want, tc.wantReason, tc.wantErrText)
			}
		})
	}
}

func TestRulesForListsModesNotMasters(t *testing.T) {
	_, resolver, err := New(Config{Modes: []string{"RBAC", "AlwaysAllow"}, Policy: policy.NewCache()})
	if err != nil {
		t.Fatal(err)
	}
	res, non, incomplete, err := resolver.RulesFor(context.Background(), &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}, "ns")
	if err != nil || incomplete || len(res) != 1 || len(non) != 1 || res[0].GetVerbs()[0] != "*" {
		t.Errorf("got %v %v %v %v", res, non, incomplete, err)
	}
}
