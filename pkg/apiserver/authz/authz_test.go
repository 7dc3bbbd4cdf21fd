package authz

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestForbidden checks kube's 403 messages (as kube-apiserver 1.37.2
// words them with --authorization-mode=AlwaysDeny).
func TestForbidden(t *testing.T) {
	t.Parallel()
	jane := &user.DefaultInfo{Name: "jane"}
	a := New(Named{Name: ModeAlwaysDeny.Name(), Authorizer: AlwaysDeny{}})
	for _, tc := range []struct {
		name  string
		attrs *authorizer.AttributesRecord
		want  string
	}{
		{"namespaced list", &authorizer.AttributesRecord{User: jane, Verb: "list", Resource: "secrets", Namespace: "y", ResourceRequest: true},
			`secrets is forbidden: User "jane" cannot list resource "secrets" in API group "" in the namespace "y": alwaysdeny: Everything is forbidden.`},
		{"named get", &authorizer.AttributesRecord{User: jane, Verb: "get", Resource: "secrets", Namespace: "y", Name: "s1", ResourceRequest: true},
			`secrets "s1" is forbidden: User "jane" cannot get resource "secrets" in API group "" in the namespace "y": alwaysdeny: Everything is forbidden.`},
		{"cluster scope, group", &authorizer.AttributesRecord{User: jane, Verb: "list", APIGroup: "apps", Resource: "deployments", ResourceRequest: true},
			`deployments.apps is forbidden: User "jane" cannot list resource "deployments" in API group "apps" at the cluster scope: alwaysdeny: Everything is forbidden.`},
		{"subresource", &authorizer.AttributesRecord{User: jane, Verb: "get", Resource: "nodes", Subresource: "status", Name: "n1", ResourceRequest: true},
			`nodes "n1" is forbidden: User "jane" cannot get resource "nodes/status" in API group "" at the cluster scope: alwaysdeny: Everything is forbidden.`},
		{"path", &authorizer.AttributesRecord{User: jane, Verb: "get", Path: "/healthz"},
			`forbidden: User "jane" cannot get path "/healthz": alwaysdeny: Everything is forbidden.`},
		{"escaped", &authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "<x>&"}, Verb: "get", Path: "/a"},
			`forbidden: User "&lt;x&gt;&amp;" cannot get path "/a": alwaysdeny: Everything is forbidden.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), tc.attrs)
			if d != authorizer.DecisionNoOpinion || err != nil {
				t.Fatalf("decision %v %v", d, err)
			}
			if got := Forbidden(tc.attrs, reason).Error(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestChain: system:masters may do anything; the first Allow or Deny
// decides; otherwise the reasons are joined.
func TestChain(t *testing.T) {
	t.Parallel()
	deny := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionDeny, "no", nil
	})
	failing := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionNoOpinion, "broken", errors.New("boom")
	})
	admin := &authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "a", Groups: []string{user.SystemPrivilegedGroup}}}
	jane := &authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "jane"}}
	ctx := context.Background()
	if d, _, _ := New(Named{"deny", deny}).Authorize(ctx, admin); d != authorizer.DecisionAllow {
		t.Errorf("system:masters: %v", d)
	}
	if d, reason, _ := New(Named{"deny", deny}, Named{"allow", AlwaysAllow{}}).Authorize(ctx, jane); d != authorizer.DecisionDeny || reason != "no" {
		t.Errorf("a Deny first: %v %q", d, reason)
	}
	d, reason, err := New(Named{"failing", failing}, Named{"alwaysdeny", AlwaysDeny{}}).Authorize(ctx, jane)
	if d != authorizer.DecisionNoOpinion || reason != "failing: broken\nalwaysdeny: Everything is forbidden." || err == nil || err.Error() != "boom" {
		t.Errorf("no opinion: %v %q %v", d, reason, err)
	}
}

func TestParseModes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                        "at least one authorization-mode must be passed",
		"Foo":                     `authorization-mode "Foo" is not a valid mode`,
		"RBAC,ABAC":               `authorization-mode "ABAC" is not a valid mode`,
		"AlwaysAllow,AlwaysAllow": `authorization-mode ["AlwaysAllow" "AlwaysAllow"] has mode specified more than once`,
	} {
		var list []string
		if in != "" {
			list = strings.Split(in, ",")
		}
		if _, err := ParseModes(list); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", in, err, want)
		}
	}
	if modes, err := ParseModes([]string{"AlwaysDeny", "RBAC", "AlwaysAllow"}); err != nil || len(modes) != 3 {
		t.Errorf("%v %v", modes, err)
	}
	if modes, err := ParseModes([]string{"Node", "RBAC"}); err != nil || len(modes) != 2 || modes[0] != ModeNode {
		t.Errorf("kubeadm's Node,RBAC: %v %v", modes, err)
	}
}
