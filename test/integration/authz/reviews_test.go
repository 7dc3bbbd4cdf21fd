package authz

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAccessReviews asks each review API through client-go: a
// SubjectAccessReview about another user, a LocalSubjectAccessReview in
// a namespace, a SelfSubjectAccessReview and a SelfSubjectRulesReview as
// the user asking.
func TestAccessReviews(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	mustCreate(t, func() error {
		_, err := admin(t).RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "reader"},
			Rules: []rbacv1.PolicyRule{rules([]string{"get", "list"}, "", []string{"pods", "pods/log"})}}, metav1.CreateOptions{})
		return err
	})
	bind(t, ns, "bob-reads", ref("Role", "reader"), user("bob"))
	eventually(t, "bob's role in force", func() error { return wantAllowed("bob", nil, "get", "", "pods", ns) })

	bob := clientFor(t, "bob-token").AuthorizationV1()
	self := func(verb, resource, sub string) authorizationv1.SubjectAccessReviewStatus {
		t.Helper()
		out, err := bob.SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource, Subresource: sub}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Status
	}
	if s := self("get", "pods", "log"); !s.Allowed || s.Reason != `RBAC: allowed by RoleBinding "bob-reads/`+ns+`" of Role "reader" to User "bob"` {
		t.Errorf("bob get pods/log: %+v", s)
	}
	if s := self("delete", "pods", ""); s.Allowed || s.Denied || s.Reason != "" {
		t.Errorf("bob delete pods: %+v", s)
	}

	local, err := admin(t).AuthorizationV1().LocalSubjectAccessReviews(ns).Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns},
		Spec:       authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "list", Resource: "pods"}}},
		metav1.CreateOptions{})
	if err != nil || !local.Status.Allowed {
		t.Errorf("local review: %v %+v", err, local)
	}
	// Another namespace in the spec than in the URL: kube's 422.
	got := do(t, "admin-token", http.MethodPost, "/apis/authorization.k8s.io/v1/namespaces/"+ns+"/localsubjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","spec":{"user":"bob","resourceAttributes":{"namespace":"other","verb":"get","resource":"pods"}}}`).
		statusMessage(t, http.StatusUnprocessableEntity)
	wantMessage(t, "local review elsewhere", got, `.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace`)
	got = do(t, "admin-token", http.MethodPost, "/apis/authorization.k8s.io/v1/subjectaccessreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{}}`).statusMessage(t, http.StatusUnprocessableEntity)
	wantMessage(t, "empty review", got, `.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]`)
	got = do(t, "bob-token", http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{}}`).statusMessage(t, http.StatusBadRequest)
	wantMessage(t, "rules review without a namespace", got, "no namespace on request")

	rulesReview, err := bob.SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rulesReview.Status.ResourceRules {
		found = found || strings.Join(r.Resources, ",") == "pods,pods/log" && strings.Join(r.Verbs, ",") == "get,list"
	}
	if !found || rulesReview.Status.Incomplete || len(rulesReview.Status.NonResourceRules) == 0 {
		t.Errorf("rules of bob: %+v", rulesReview.Status)
	}
}

// TestKubectlAuthCanI: kubectl auth can-i answers yes/no by exit code, and
// --list prints what kube-apiserver 1.37.2 prints for the same role
// (testdata/can-i-list.txt, recorded with kubectl v1.32).
func TestKubectlAuthCanI(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
	ns := namespace(t)
	ctx := context.Background()
	mustCreate(t, func() error {
		_, err := admin(t).RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "writer"}, Rules: []rbacv1.PolicyRule{
			rules([]string{"get", "list"}, "", []string{"pods"}),
			rules([]string{"create", "update", "patch", "get", "delete"}, "rbac.authorization.k8s.io", []string{"roles", "rolebindings"}),
		}}, metav1.CreateOptions{})
		return err
	})
	bind(t, ns, "grace-writer", ref("Role", "writer"), user("grace"))
	eventually(t, "grace's role in force", func() error { return wantAllowed("grace", nil, "get", "", "pods", ns) })

	kubectl := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command("kubectl", append([]string{"--server", srv.URL, "--token", "grace-token", "--insecure-skip-tls-verify",
			"--cache-dir", filepath.Join(t.TempDir(), "cache"), "-n", ns, "auth", "can-i"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if exitErr, ok := err.(*exec.ExitError); ok {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}
	if out, code := kubectl("get", "pods"); out != "yes\n" || code != 0 {
		t.Errorf("can-i get pods: %q, exit %d", out, code)
	}
	if out, code := kubectl("delete", "pods"); out != "no\n" || code != 1 {
		t.Errorf("can-i delete pods: %q, exit %d", out, code)
	}
	want, err := os.ReadFile("testdata/can-i-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out, code := kubectl("--list"); out != string(want) || code != 0 {
		t.Errorf("can-i --list, exit %d:\n%s\nkube's:\n%s", code, out, want)
	}
}
