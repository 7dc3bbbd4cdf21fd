package authz

import (
	"context"
	"net/http"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func roleBody(name string, verbs ...string) map[string]interface{} {
	return map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]string{"name": name},
		"rules": []map[string]interface{}{{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": verbs}}}
}

func bindingBody(name, kind, role string) map[string]interface{} {
	return map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]string{"name": name},
		"roleRef":  map[string]string{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
		"subjects": []map[string]string{{"kind": "User", "name": "x", "apiGroup": "rbac.authorization.k8s.io"}}}
}

// TestEscalationPrevention: a user who may write roles and bindings
// (dave, in one namespace) can only grant what it holds, unless it may
// escalate or bind; the refusals are kube-apiserver 1.37.2's, word for
// word (recorded with the same objects).
func TestEscalationPrevention(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	rbac := admin(t).RbacV1()
	secrets := ns + "-secrets"
	mustCreate(t, func() error {
		_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "writer"}, Rules: []rbacv1.PolicyRule{
			rules([]string{"get", "list"}, "", []string{"pods"}),
			rules([]string{"create", "update", "patch", "get", "delete"}, "rbac.authorization.k8s.io", []string{"roles", "rolebindings"}),
		}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.ClusterRoles().Create(ctx, cluster(secrets, nil, rules([]string{"get", "list", "watch"}, "", []string{"secrets"})), metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(ctx, secrets, metav1.DeleteOptions{}) })
	bind(t, ns, "dave-writer", ref("Role", "writer"), user("dave"))
	eventually(t, "dave's role in force", func() error { return wantAllowed("dave", nil, "create", "rbac.authorization.k8s.io", "roles", ns) })

	roles, bindings := rbacPath("roles", ns), rbacPath("rolebindings", ns)
	const notHeld = `user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n"

	got := do(t, "dave-token", http.MethodPost, roles, map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]string{"name": "more"},
		"rules": []map[string]interface{}{{"apiGroups": []string{""}, "resources": []string{"pods", "secrets"}, "verbs": []string{"get", "list", "delete"}}}}).statusMessage(t, http.StatusForbidden)
	wantMessage(t, "a role granting more", got, `roles.rbac.authorization.k8s.io "more" is forbidden: `+notHeld+
		`{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`+"\n"+`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "delete"]}`)

	got = do(t, "dave-token", http.MethodPost, bindings, bindingBody("b", "ClusterRole", secrets)).statusMessage(t, http.StatusForbidden)
	wantMessage(t, "a binding to a role not held", got, `rolebindings.rbac.authorization.k8s.io "b" is forbidden: `+notHeld+
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch"]}`)

	got = do(t, "dave-token", http.MethodPost, bindings, bindingBody("b2", "ClusterRole", "does-not-exist")).statusMessage(t, http.StatusNotFound)
	wantMessage(t, "a binding to a missing role", got, `rolebindings.rbac.authorization.k8s.io "does-not-exist" not found`)

	// What dave holds he may grant; a role just created may be bound at
	// once (it is read from storage, not from the cache).
	do(t, "dave-token", http.MethodPost, roles, roleBody("less", "get")).wantCode(t, http.StatusCreated)
	do(t, "dave-token", http.MethodPost, bindings, bindingBody("b3", "Role", "less")).wantCode(t, http.StatusCreated)

	got = do(t, "dave-token", http.MethodPut, roles+"/less", roleBody("less", "get", "watch")).statusMessage(t, http.StatusForbidden)
	wantMessage(t, "an update granting more", got, `roles.rbac.authorization.k8s.io "less" is forbidden: `+notHeld+`{APIGroups:[""], Resources:["pods"], Verbs:["watch"]}`)

	// Changing only what garbage collection changes needs no check.
	patch := `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"0d5c1c28-7b1a-4c61-9e8f-4f1c2a3b4c5d"}]}}`
	do(t, "dave-token", http.MethodPatch, roles+"/less", patch, "Content-Type: application/merge-patch+json").wantCode(t, http.StatusOK)

	// escalate on roles, bind on that cluster role: allowed.
	mustCreate(t, func() error {
		_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "escalator"}, Rules: []rbacv1.PolicyRule{
			rules([]string{"escalate"}, "rbac.authorization.k8s.io", []string{"roles"}),
			rules([]string{"bind"}, "rbac.authorization.k8s.io", []string{"clusterroles"}, secrets),
		}}, metav1.CreateOptions{})
		return err
	})
	bind(t, ns, "dave-escalator", ref("Role", "escalator"), user("dave"))
	eventually(t, "dave may escalate", func() error { return wantAllowed("dave", nil, "escalate", "rbac.authorization.k8s.io", "roles", ns) })
	do(t, "dave-token", http.MethodPut, roles+"/less", roleBody("less", "get", "watch")).wantCode(t, http.StatusOK)
	do(t, "dave-token", http.MethodPost, bindings, bindingBody("b", "ClusterRole", secrets)).wantCode(t, http.StatusCreated)
	// bind names one role: another is still checked.
	do(t, "dave-token", http.MethodPost, bindings, bindingBody("b4", "ClusterRole", "admin")).wantCode(t, http.StatusForbidden)
	// A superuser needs no permission.
	do(t, "admin-token", http.MethodPost, bindings, bindingBody("b5", "ClusterRole", "cluster-admin")).wantCode(t, http.StatusCreated)
}

// TestAggregationRuleNeedsClusterAdmin: setting an aggregation rule takes
// every permission, whatever the rules; kube's messages.
func TestAggregationRuleNeedsClusterAdmin(t *testing.T) {
	t.Parallel()
	ns := namespace(t) // names the cluster objects of this test
	ctx := context.Background()
	rbac := admin(t).RbacV1()
	mustCreate(t, func() error {
		_, err := rbac.ClusterRoles().Create(ctx, cluster(ns+"-writer", nil, rules([]string{"create", "update"}, "rbac.authorization.k8s.io", []string{"clusterroles"})), metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-frank"},
			RoleRef: ref("ClusterRole", ns+"-writer"), Subjects: []rbacv1.Subject{user("frank")}}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctx, ns+"-frank", metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctx, ns+"-writer", metav1.DeleteOptions{})
	})
	eventually(t, "frank may create cluster roles", func() error {
		return wantAllowed("frank", nil, "create", "rbac.authorization.k8s.io", "clusterroles", "")
	})
	path := rbacPath("clusterroles", "")
	got := do(t, "frank-token", http.MethodPost, path, map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]string{"name": ns + "-agg"},
		"aggregationRule": map[string]interface{}{"clusterRoleSelectors": []map[string]interface{}{{"matchLabels": map[string]string{"x": "y"}}}}}).statusMessage(t, http.StatusForbidden)
	wantMessage(t, "an aggregation rule", got, `clusterroles.rbac.authorization.k8s.io "`+ns+`-agg" is forbidden: must have cluster-admin privileges to use the aggregationRule`)
	got = do(t, "frank-token", http.MethodPost, path, map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]string{"generateName": "gen-"},
		"rules": []map[string]interface{}{{"apiGroups": []string{"*"}, "resources": []string{"*"}, "verbs": []string{"*"}}}}).statusMessage(t, http.StatusForbidden)
	wantMessage(t, "a generated name", got, `clusterroles.rbac.authorization.k8s.io is forbidden: user "frank" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+`{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`)
}

func wantMessage(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func mustCreate(t *testing.T, create func() error) {
	t.Helper()
	if err := create(); err != nil {
		t.Fatal(err)
	}
}

func bind(t *testing.T, ns, name string, roleRef rbacv1.RoleRef, subjects ...rbacv1.Subject) {
	t.Helper()
	_, err := admin(t).RbacV1().RoleBindings(ns).Create(context.Background(),
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: roleRef, Subjects: subjects}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
