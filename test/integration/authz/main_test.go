// Package authz tests authorization through the real HTTP API: the rbac
// objects and their validation, kube's bootstrap policy, the RBAC
// decisions (a matrix recorded from kube-apiserver 1.37.2 and replayed
// here), the review APIs and kubectl auth can-i, escalation prevention
// and the aggregation of cluster roles. Users come from a token file
// (kube's CSV, with groups).
package authz

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var srv *testserver.TestServer

// tokenUser is a line of the token file.
type tokenUser struct {
	token, name string
	groups      []string
}

// users of the shared server; the admin is in system:masters. Groups are
// listed as kube's authenticators leave them (system:authenticated last).
// Each test binds its own users (the matrix: alice, bob's groups, carol,
// dave in its namespaces; escalation: dave, frank; reviews: bob; kubectl:
// grace), so that parallel tests do not grant each other's users; heidi
// is bound to nothing.
var users = []tokenUser{
	{"admin-token", "admin", []string{"system:masters", "system:authenticated"}},
	{"alice-token", "alice", []string{"devs", "system:authenticated"}},
	{"bob-token", "bob", []string{"system:authenticated"}},
	{"carol-token", "carol", []string{"system:authenticated"}},
	{"dave-token", "dave", []string{"system:authenticated"}},
	{"frank-token", "frank", []string{"system:authenticated"}},
	{"grace-token", "grace", []string{"system:authenticated"}},
	{"heidi-token", "heidi", []string{"system:authenticated"}},
}

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) {
		// With a token file, the server generates no admin token: the
		// file's admin is the test server's administrator.
		ts.ClientConfig.BearerToken, ts.Token = "admin-token", "admin-token"
		srv = ts
	}, func(o *app.Options) {
		var lines []string
		for _, u := range users {
			lines = append(lines, fmt.Sprintf("%s,%s,%s,%q", u.token, u.name, u.name, strings.Join(u.groups, ",")))
		}
		file := filepath.Join(o.DataDir, "..", "tokens.csv")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			panic(err)
		}
		o.TokenAuthFile = file
	})
}

// config returns the client config of the user of token.
func config(token string) *rest.Config {
	c := rest.CopyConfig(srv.ClientConfig)
	c.BearerToken = token
	return c
}

func clientFor(t testing.TB, token string) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(config(token))
}

func admin(t testing.TB) *kubernetes.Clientset { return clientFor(t, "admin-token") }

// namespace creates a namespace for one test.
func namespace(t testing.TB) string {
	t.Helper()
	return srv.CreateNamespace(t)
}

// eventually retries check until it returns nil (the policy cache follows
// writes through a watch), for at most 10 s.
func eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantAllowed asks the server, by a SubjectAccessReview, whether user
// (in groups) may do verb on resource in namespace, and returns an error
// unless it may (for eventually).
func wantAllowed(user string, groups []string, verb, group, resource, namespace string) error {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user, Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace},
	}}
	out, err := kubernetes.NewForConfigOrDie(srv.ClientConfig).AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if !out.Status.Allowed {
		return fmt.Errorf("%s may not %s %s in %q", user, verb, resource, namespace)
	}
	return nil
}
