package authz

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The matrix is recorded from a reference kube-apiserver (with a
// kube-controller-manager running the clusterrole-aggregation controller,
// so that aggregated roles are filled) by hack/record-authz-matrix.sh:
//
//	go test ./test/integration/authz -run TestAuthorizationMatrix -record-server URL -record-token TOKEN
var (
	recordServer = flag.String("record-server", "", "record the matrix's decisions from this kube-apiserver into testdata/matrix.json")
	recordToken  = flag.String("record-token", "", "bearer token of a system:masters user of -record-server")
)

const (
	matrixA      = "authz-matrix-a"
	matrixB      = "authz-matrix-b"
	matrixGolden = "testdata/matrix.json"
)

// identity is a user as an authenticator would present it: a client
// certificate's CN and O, a token file line, a service account token,
// anonymous, or the user an impersonating request becomes.
type identity struct {
	how    string
	name   string
	groups []string
}

var matrixIdentities = []identity{
	{"cert", "alice", []string{"devs", "system:authenticated"}},
	{"cert", "kube-admin", []string{"system:masters", "system:authenticated"}},
	{"token", "bob", []string{"ops", "system:authenticated"}},
	{"token", "carol", []string{"system:authenticated"}},
	{"token", "dave", []string{"system:authenticated"}},
	{"token", "imp-admin", []string{"system:authenticated"}},
	{"token", "mallory", []string{"system:authenticated"}},
	{"serviceaccount", "system:serviceaccount:" + matrixB + ":robot", []string{"system:serviceaccounts", "system:serviceaccounts:" + matrixB, "system:authenticated"}},
	{"serviceaccount", "system:serviceaccount:" + matrixA + ":builder", []string{"system:serviceaccounts", "system:serviceaccounts:" + matrixA, "system:authenticated"}},
	{"anonymous", "system:anonymous", []string{"system:unauthenticated"}},
	{"impersonated", "erin", []string{"devs", "system:authenticated"}},
}

// matrixRequests are the questions asked for every identity.
func matrixRequests() []authorizationv1.SubjectAccessReviewSpec {
	var out []authorizationv1.SubjectAccessReviewSpec
	res := func(verb, group, resource, sub, ns, name string) {
		out = append(out, authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}})
	}
	url := func(verb, path string) {
		out = append(out, authorizationv1.SubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: path}})
	}
	for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"} {
		res(verb, "", "pods", "", matrixA, "")
		res(verb, "", "pods", "", matrixB, "")
	}
	res("list", "", "pods", "", "", "")
	res("get", "", "pods", "log", matrixA, "p")
	res("get", "", "pods", "log", matrixB, "p")
	res("create", "", "pods", "exec", matrixA, "p")
	res("get", "", "configmaps", "", matrixA, "c")
	res("list", "", "secrets", "", matrixA, "")
	res("get", "", "secrets", "", matrixA, "token")
	res("get", "", "secrets", "", matrixA, "other")
	res("get", "apps", "deployments", "", matrixA, "web")
	res("get", "apps", "deployments", "", matrixA, "other")
	res("update", "apps", "deployments", "scale", matrixA, "web")
	res("patch", "apps", "deployments", "scale", matrixB, "web")
	res("update", "apps", "deployments", "status", matrixA, "web")
	res("create", "batch", "jobs", "", matrixA, "")
	res("delete", "batch", "cronjobs", "", matrixA, "c")
	res("get", "example.com", "widgets", "", matrixA, "w")
	res("list", "example.com", "widgets", "", matrixB, "")
	res("list", "", "nodes", "", "", "")
	res("get", "", "namespaces", "", "", matrixA)
	res("list", "rbac.authorization.k8s.io", "roles", "", matrixA, "")
	res("escalate", "rbac.authorization.k8s.io", "roles", "", matrixA, "")
	res("bind", "rbac.authorization.k8s.io", "clusterroles", "", matrixA, "admin")
	res("bind", "rbac.authorization.k8s.io", "clusterroles", "", matrixA, "edit")
	res("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "", "")
	res("create", "authentication.k8s.io", "selfsubjectreviews", "", "", "")
	res("impersonate", "", "users", "", "", "erin")
	res("impersonate", "", "users", "", "", "root")
	res("impersonate", "", "groups", "", "", "devs")
	res("impersonate", "", "serviceaccounts", "", matrixB, "robot")
	res("get", "", "serviceaccounts", "token", matrixB, "robot")
	res("create", "", "serviceaccounts", "token", matrixB, "robot")
	for _, path := range []string{"/healthz", "/livez", "/version", "/version/", "/api", "/apis/apps/v1", "/openapi/v2", "/metrics", "/logs", "/logs/kube.log", "/debug/pprof/heap"} {
		url("get", path)
	}
	url("post", "/healthz")
	url("delete", "/logs/kube.log")
	return out
}

func cluster(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func rules(verbs []string, group string, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources, ResourceNames: names}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: name}
}
func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: name}
}
func serviceAccount(ns, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: "ServiceAccount", Namespace: ns, Name: name}
}

func ref(kind, name string) rbacv1.RoleRef {
	return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
}

// matrixPolicy is created in both servers before the questions.
type matrixPolicy struct {
	clusterRoles        []*rbacv1.ClusterRole
	roles               []*rbacv1.Role
	clusterRoleBindings []*rbacv1.ClusterRoleBinding
	roleBindings        []*rbacv1.RoleBinding
}

func newMatrixPolicy() matrixPolicy {
	read := []string{"get", "list", "watch"}
	aggregate := map[string]string{"authz-matrix.example.com/aggregate": "true"}
	return matrixPolicy{
		clusterRoles: []*rbacv1.ClusterRole{
			cluster("authz-matrix-pod-reader", nil, rules(read, "", []string{"pods", "pods/log"})),
			cluster("authz-matrix-urls", nil, rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/logs/*", "/metrics"}}),
			// Aggregated: the rules of the two parts, kept up to date.
			{ObjectMeta: metav1.ObjectMeta{Name: "authz-matrix-aggregated"},
				AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: aggregate}}}},
			cluster("authz-matrix-part-1", aggregate, rules([]string{"get"}, "", []string{"configmaps"})),
			cluster("authz-matrix-part-2", aggregate, rules([]string{"get"}, "", []string{"secrets"}, "token"), rules([]string{"*"}, "apps", []string{"*/scale"})),
			// Into kube's view (and so edit and admin).
			cluster("authz-matrix-widgets-view", map[string]string{"rbac.authorization.k8s.io/aggregate-to-view": "true"}, rules(read, "example.com", []string{"widgets"})),
			cluster("authz-matrix-impersonator", nil,
				rules([]string{"impersonate"}, "", []string{"users"}, "erin"),
				rules([]string{"impersonate"}, "", []string{"groups"}, "devs"),
				rules([]string{"impersonate"}, "", []string{"serviceaccounts"})),
		},
		roles: []*rbacv1.Role{
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "deploy-scaler"}, Rules: []rbacv1.PolicyRule{
				rules([]string{"update", "patch"}, "apps", []string{"deployments/scale"}),
				rules([]string{"get"}, "apps", []string{"deployments"}, "web"),
			}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "batch-all"}, Rules: []rbacv1.PolicyRule{rules([]string{"*"}, "batch", []string{"*"})}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "binder"}, Rules: []rbacv1.PolicyRule{
				rules([]string{"bind"}, "rbac.authorization.k8s.io", []string{"clusterroles"}, "edit"),
				rules([]string{"escalate", "list"}, "rbac.authorization.k8s.io", []string{"roles"}),
			}},
		},
		clusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Name: "authz-matrix-carol"}, RoleRef: ref("ClusterRole", "authz-matrix-aggregated"), Subjects: []rbacv1.Subject{user("carol")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "authz-matrix-ops"}, RoleRef: ref("ClusterRole", "authz-matrix-urls"), Subjects: []rbacv1.Subject{group("ops")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "authz-matrix-imp"}, RoleRef: ref("ClusterRole", "authz-matrix-impersonator"), Subjects: []rbacv1.Subject{user("imp-admin")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "authz-matrix-dangling"}, RoleRef: ref("ClusterRole", "authz-matrix-missing"), Subjects: []rbacv1.Subject{user("mallory")}},
		},
		roleBindings: []*rbacv1.RoleBinding{
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "alice-view"}, RoleRef: ref("ClusterRole", "view"), Subjects: []rbacv1.Subject{user("alice")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "devs-scale"}, RoleRef: ref("Role", "deploy-scaler"), Subjects: []rbacv1.Subject{group("devs")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "dave-edit"}, RoleRef: ref("ClusterRole", "edit"), Subjects: []rbacv1.Subject{user("dave")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "dave-binder"}, RoleRef: ref("Role", "binder"), Subjects: []rbacv1.Subject{user("dave")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "b-accounts-batch"}, RoleRef: ref("Role", "batch-all"), Subjects: []rbacv1.Subject{group("system:serviceaccounts:" + matrixB)}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "builder-admin"}, RoleRef: ref("ClusterRole", "admin"), Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixA, Name: "dangling"}, RoleRef: ref("Role", "missing"), Subjects: []rbacv1.Subject{user("alice"), group("system:unauthenticated")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixB, Name: "robot-reads-pods"}, RoleRef: ref("ClusterRole", "authz-matrix-pod-reader"), Subjects: []rbacv1.Subject{serviceAccount("", "robot")}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: matrixB, Name: "anonymous-reads-pods"}, RoleRef: ref("ClusterRole", "authz-matrix-pod-reader"), Subjects: []rbacv1.Subject{group("system:unauthenticated")}},
		},
	}
}

// create makes the namespaces and the policy in the server of client
// (objects left by an earlier run are replaced).
func (p matrixPolicy) create(ctx context.Context, c kubernetes.Interface) error {
	for _, ns := range []string{matrixA, matrixB} {
		_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	rbac := c.RbacV1()
	for _, r := range p.clusterRoles {
		_ = rbac.ClusterRoles().Delete(ctx, r.Name, metav1.DeleteOptions{})
		if _, err := rbac.ClusterRoles().Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, r := range p.roles {
		_ = rbac.Roles(r.Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
		if _, err := rbac.Roles(r.Namespace).Create(ctx, r, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, b := range p.clusterRoleBindings {
		_ = rbac.ClusterRoleBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
		if _, err := rbac.ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, b := range p.roleBindings {
		_ = rbac.RoleBindings(b.Namespace).Delete(ctx, b.Name, metav1.DeleteOptions{})
		if _, err := rbac.RoleBindings(b.Namespace).Create(ctx, b, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ready reports whether the server's decisions rest on the whole policy:
// the aggregated roles have their rules and the last binding decides.
func matrixReady(ctx context.Context, c kubernetes.Interface) error {
	agg, err := c.RbacV1().ClusterRoles().Get(ctx, "authz-matrix-aggregated", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if len(agg.Rules) != 3 {
		return fmt.Errorf("authz-matrix-aggregated has %d rules, want 3", len(agg.Rules))
	}
	checks := []authorizationv1.SubjectAccessReviewSpec{
		{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Group: "example.com", Resource: "widgets", Namespace: matrixA}},
		{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: matrixB}},
		{User: "carol", ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "update", Group: "apps", Resource: "deployments", Subresource: "scale", Namespace: matrixB}},
	}
	for _, spec := range checks {
		out, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if !out.Status.Allowed {
			return fmt.Errorf("%s may not %s %s yet", spec.User, spec.ResourceAttributes.Verb, spec.ResourceAttributes.Resource)
		}
	}
	return nil
}

// decision is one recorded answer.
type decision struct {
	Identity string `json:"identity"`
	Request  string `json:"request"`
	Allowed  bool   `json:"allowed"`
	Denied   bool   `json:"denied,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

type golden struct {
	Source    string     `json:"source"`
	Decisions []decision `json:"decisions"`
}

func describeRequest(spec authorizationv1.SubjectAccessReviewSpec) string {
	if n := spec.NonResourceAttributes; n != nil {
		return n.Verb + " " + n.Path
	}
	r := spec.ResourceAttributes
	resource := r.Resource
	if r.Group != "" {
		resource += "." + r.Group
	}
	if r.Subresource != "" {
		resource += "/" + r.Subresource
	}
	return fmt.Sprintf("%s %s ns=%q name=%q", r.Verb, resource, r.Namespace, r.Name)
}

// ask runs every question of the matrix against the server of client.
func ask(ctx context.Context, c kubernetes.Interface) ([]decision, error) {
	var out []decision
	for _, id := range matrixIdentities {
		for _, spec := range matrixRequests() {
			spec.User, spec.Groups = id.name, id.groups
			res, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			out = append(out, decision{Identity: id.how + " " + id.name, Request: describeRequest(spec),
				Allowed: res.Status.Allowed, Denied: res.Status.Denied, Reason: res.Status.Reason})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Identity < out[j].Identity })
	return out, nil
}

// TestAuthorizationMatrix decides every question of the matrix with the
// server's RBAC and compares with kube-apiserver 1.37.2's decisions on the
// same objects: allowed and denied always; the reason of a refusal
// exactly (it names the roles that could not be found); the reason of an
// allowance by its kind (kube names one of the bindings that allow, the
// first it happens to visit).
func TestAuthorizationMatrix(t *testing.T) {
	ctx := context.Background()
	if *recordServer != "" {
		recordMatrix(t)
		return
	}
	data, err := os.ReadFile(matrixGolden)
	if err != nil {
		t.Fatal(err)
	}
	var want golden
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	c := admin(t)
	if err := newMatrixPolicy().create(ctx, c); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the matrix policy in force", func() error { return matrixReady(ctx, c) })
	got, err := ask(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.Decisions) {
		t.Fatalf("%d decisions, the golden has %d (re-record it after changing the matrix)", len(got), len(want.Decisions))
	}
	allowedCount := 0
	for i, w := range want.Decisions {
		g := got[i]
		if g.Identity != w.Identity || g.Request != w.Request {
			t.Fatalf("decision %d is %s / %s, the golden's %s / %s (re-record it)", i, g.Identity, g.Request, w.Identity, w.Request)
		}
		if g.Allowed {
			allowedCount++
		}
		if g.Allowed != w.Allowed || g.Denied != w.Denied || !sameReason(g, w) {
			t.Errorf("%s: %s:\n got allowed=%v denied=%v %q\nkube allowed=%v denied=%v %q", w.Identity, w.Request, g.Allowed, g.Denied, g.Reason, w.Allowed, w.Denied, w.Reason)
		}
	}
	if allowedCount == 0 || allowedCount == len(got) {
		t.Errorf("%d of %d allowed: the matrix decides nothing", allowedCount, len(got))
	}
	t.Logf("%d decisions, %d allowed, as kube (%s)", len(got), allowedCount, want.Source)
}

func sameReason(g, w decision) bool {
	const allowedBy = "RBAC: allowed by "
	if w.Allowed && strings.HasPrefix(w.Reason, allowedBy) {
		return strings.HasPrefix(g.Reason, allowedBy)
	}
	return g.Reason == w.Reason
}

func recordMatrix(t *testing.T) {
	ctx := context.Background()
	c := kubernetes.NewForConfigOrDie(&rest.Config{Host: *recordServer, BearerToken: *recordToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1})
	version, err := c.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if err := newMatrixPolicy().create(ctx, c); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the matrix policy in force in the reference (is kube-controller-manager aggregating?)", func() error { return matrixReady(ctx, c) })
	decisions, err := ask(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(golden{Source: "kube-apiserver " + version.GitVersion + " --authorization-mode=Node,RBAC, with kube-controller-manager's clusterrole-aggregation", Decisions: decisions}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(matrixGolden, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d decisions from %s", len(decisions), version.GitVersion)
}
