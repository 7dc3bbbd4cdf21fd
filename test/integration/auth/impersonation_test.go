package auth

import (
	"context"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// impersonationPolicy is the authorizer of the impersonation tests, after
// AlwaysDeny: "impersonator" may act as bob (or in group devs) under
// constrained impersonation, for any request; "legacy" may use the
// legacy impersonate verb on bob and any group; bob may do anything, and
// anyone may ask who they are.
func impersonationPolicy(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	name := a.GetUser().GetName()
	allowed := false
	switch {
	case name == "bob", a.GetVerb() == "create" && a.GetResource() == "selfsubjectreviews":
		allowed = true
	case name == "impersonator" && strings.HasPrefix(a.GetVerb(), "impersonate-on:user-info:"):
		allowed = true
	case name == "impersonator" && a.GetVerb() == "impersonate:user-info":
		allowed = a.GetResource() == "users" && a.GetName() == "bob" || a.GetResource() == "groups" && a.GetName() == "devs"
	case name == "legacy" && a.GetVerb() == "impersonate":
		allowed = a.GetResource() == "users" && a.GetName() == "bob" || a.GetResource() == "groups"
	}
	if allowed {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// TestImpersonation: who may act as whom, and kube-apiserver 1.37.2's
// words when one may not.
func TestImpersonation(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) { o.Auth.AuthorizationModes = []string{"AlwaysDeny"} },
		testserver.WithAuthorizer("test", authorizer.AuthorizerFunc(impersonationPolicy)))
	as := func(requestor string, user string, groups ...string) *rest.Config {
		cfg := ts.ClientConfigFor(t, requestor)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		return cfg
	}
	for _, tc := range []struct {
		name       string
		cfg        *rest.Config
		wantUser   string
		wantGroups []string
		wantErr    string
	}{
		{"constrained", as("impersonator", "bob"), "bob", []string{"system:authenticated"}, ""},
		{"constrained with a group", as("impersonator", "bob", "devs"), "bob", []string{"devs", "system:authenticated"}, ""},
		{"constrained, another user", as("impersonator", "alice"), "", nil,
			`users.authentication.k8s.io "alice" is forbidden: User "impersonator" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope: alwaysdeny: Everything is forbidden.`},
		{"nobody", as("nobody", "bob"), "", nil,
			`selfsubjectreviews.authentication.k8s.io is forbidden: User "nobody" cannot impersonate-on:user-info:create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope: alwaysdeny: Everything is forbidden.`},
		{"legacy verb", as("legacy", "bob", "ops"), "bob", []string{"ops", "system:authenticated"}, ""},
		{"a service account", asAdmin(ts, "system:serviceaccount:ns1:robot"), "system:serviceaccount:ns1:robot",
			[]string{"system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"}, ""},
		{"anonymous", asAdmin(ts, "system:anonymous"), "system:anonymous", []string{"system:unauthenticated"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := whoami(t, tc.cfg)
			if tc.wantErr != "" {
				if !apierrors.IsForbidden(err) || err.Error() != tc.wantErr {
					t.Errorf("got %v\nwant 403 %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || u.Username != tc.wantUser || !slices.Equal(u.Groups, tc.wantGroups) {
				t.Errorf("got %+v %v, want %s %v", u, err, tc.wantUser, tc.wantGroups)
			}
		})
	}

	t.Run("groups without a user", func(t *testing.T) {
		cfg := ts.ClientConfigFor(t, "impersonator")
		cfg.Impersonate = rest.ImpersonationConfig{Groups: []string{"g1"}}
		_, err := whoami(t, cfg)
		want := `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g1"}, Extra:map[string][]string(nil)} without impersonating a user name`
		if !apierrors.IsBadRequest(err) || err.Error() != want {
			t.Errorf("got %v, want 400 %s", err, want)
		}
	})

	t.Run("kubectl --as", func(t *testing.T) {
		needKubectl(t)
		out, err := kubectl(t, kubeconfigFor(t, ts.ClientConfigFor(t, "impersonator")), "--as", "bob", "--as-group", "devs", "auth", "whoami")
		if err != nil || !strings.Contains(out, "bob") || !strings.Contains(out, "[devs system:authenticated]") {
			t.Errorf("kubectl --as bob: %v\n%s", err, out)
		}
		out, err = kubectl(t, kubeconfigFor(t, ts.ClientConfigFor(t, "impersonator")), "--as", "alice", "get", "configmaps")
		if err == nil || !strings.Contains(out, `Error from server (Forbidden)`) {
			t.Errorf("kubectl --as alice: %v\n%s", err, out)
		}
	})
}

// asAdmin is the admin (system:masters) acting as user.
func asAdmin(ts *testserver.TestServer, user string) *rest.Config {
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}
