package authz

import (
	"context"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/bootstrap"
)

// TestBootstrapPolicyServed: every role and binding of kube 1.37.2's
// bootstrap policy (the recorded data) is served as recorded; aggregated
// roles also have the rules of their parts.
func TestBootstrapPolicyServed(t *testing.T) {
	t.Parallel()
	p, err := bootstrap.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Source, "kube-apiserver v1.37.2") {
		t.Errorf("the policy comes from %q, want kube-apiserver v1.37.2", p.Source)
	}
	// kube 1.37.2 creates 73 cluster roles, 54 cluster role bindings, 7
	// roles and 7 role bindings.
	if n := [4]int{len(p.ClusterRoles), len(p.ClusterRoleBindings), len(p.Roles), len(p.RoleBindings)}; n != [4]int{73, 54, 7, 7} {
		t.Errorf("policy sizes %v", n)
	}
	ctx := context.Background()
	rbac := admin(t).RbacV1()
	for _, want := range p.ClusterRoles {
		got, err := rbac.ClusterRoles().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("cluster role %s: %v", want.Name, err)
			continue
		}
		if !sameMeta(got.ObjectMeta, want.ObjectMeta) || !apiequality.Semantic.DeepEqual(got.AggregationRule, want.AggregationRule) {
			t.Errorf("cluster role %s: labels %v annotations %v aggregation %v", want.Name, got.Labels, got.Annotations, got.AggregationRule)
		}
		if want.AggregationRule == nil && !apiequality.Semantic.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("cluster role %s: rules %v, want %v", want.Name, got.Rules, want.Rules)
		}
		if want.AggregationRule != nil && len(got.Rules) == 0 {
			t.Errorf("aggregated cluster role %s has no rules", want.Name)
		}
	}
	for _, want := range p.ClusterRoleBindings {
		got, err := rbac.ClusterRoleBindings().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || !sameMeta(got.ObjectMeta, want.ObjectMeta) || got.RoleRef != want.RoleRef || !apiequality.Semantic.DeepEqual(got.Subjects, want.Subjects) {
			t.Errorf("cluster role binding %s: %v %+v", want.Name, err, got)
		}
	}
	for _, want := range p.Roles {
		got, err := rbac.Roles(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || !sameMeta(got.ObjectMeta, want.ObjectMeta) || !apiequality.Semantic.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("role %s/%s: %v %+v", want.Namespace, want.Name, err, got)
		}
	}
	for _, want := range p.RoleBindings {
		got, err := rbac.RoleBindings(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil || !sameMeta(got.ObjectMeta, want.ObjectMeta) || got.RoleRef != want.RoleRef || !apiequality.Semantic.DeepEqual(got.Subjects, want.Subjects) {
			t.Errorf("role binding %s/%s: %v %+v", want.Namespace, want.Name, err, got)
		}
	}
	// As kube's: written by kube-apiserver's own client.
	r, err := rbac.ClusterRoles().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := r.ManagedFields; len(m) != 1 || m[0].Manager != "kube-apiserver" || m[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managed fields %+v", m)
	}
}

func sameMeta(got, want metav1.ObjectMeta) bool {
	return apiequality.Semantic.DeepEqual(got.Labels, want.Labels) && apiequality.Semantic.DeepEqual(got.Annotations, want.Annotations)
}

// TestBootstrapPolicyReconciled: at start, what an earlier run removed
// from the policy comes back (rules, subjects, a binding's role), unless
// the object says rbac.authorization.kubernetes.io/autoupdate: "false";
// what users added stays.
func TestBootstrapPolicyReconciled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	first, err := testserver.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	rbac := kubernetes.NewForConfigOrDie(first.ClientConfig).RbacV1()
	extra := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{"things"}}
	patches := []struct {
		name, patch string
		crb         bool
	}{
		// Loses its rules, gains one of ours.
		{"system:basic-user", `{"rules":[{"verbs":["get"],"apiGroups":["example.com"],"resources":["things"]}]}`, false},
		// Loses its rules, and is protected from reconciling.
		{"system:discovery", `{"metadata":{"annotations":{"rbac.authorization.kubernetes.io/autoupdate":"false"}},"rules":[]}`, false},
		// Loses its subjects.
		{"system:public-info-viewer", `{"subjects":[]}`, true},
	}
	for _, p := range patches {
		var err error
		if p.crb {
			_, err = rbac.ClusterRoleBindings().Patch(ctx, p.name, types.MergePatchType, []byte(p.patch), metav1.PatchOptions{})
		} else {
			_, err = rbac.ClusterRoles().Patch(ctx, p.name, types.MergePatchType, []byte(p.patch), metav1.PatchOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
	}
	// A binding of the policy now refers to another role.
	if err := rbac.ClusterRoleBindings().Delete(ctx, "system:basic-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user"},
		RoleRef: ref("ClusterRole", "view"), Subjects: []rbacv1.Subject{group("system:authenticated")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first.Server.Stop()

	second, err := testserver.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Server.Stop()
	rbac = kubernetes.NewForConfigOrDie(second.ClientConfig).RbacV1()
	basic, err := rbac.ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Ours, then kube's missing ones, one verb, resource and name each,
	// as kube's reconciler adds them.
	wantRules := []rbacv1.PolicyRule{extra,
		{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews"}},
		{Verbs: []string{"create"}, APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectrulesreviews"}},
		{Verbs: []string{"create"}, APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}},
	}
	if !apiequality.Semantic.DeepEqual(basic.Rules, wantRules) {
		t.Errorf("system:basic-user rules %v, want %v", basic.Rules, wantRules)
	}
	discovery, err := rbac.ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(discovery.Rules) != 0 {
		t.Errorf("a protected role was reconciled: %v", discovery.Rules)
	}
	viewer, err := rbac.ClusterRoleBindings().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(viewer.Subjects, []rbacv1.Subject{group("system:authenticated"), group("system:unauthenticated")}) {
		t.Errorf("system:public-info-viewer subjects %v", viewer.Subjects)
	}
	basicBinding, err := rbac.ClusterRoleBindings().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if basicBinding.RoleRef.Name != "system:basic-user" {
		t.Errorf("system:basic-user binding refers to %v, want it recreated", basicBinding.RoleRef)
	}
}
