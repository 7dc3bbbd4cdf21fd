package authz

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/bootstrap"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac/rbacrules"
)

// benchPolicy is kube's bootstrap policy (aggregated roles filled) plus,
// in each of namespaces namespaces, a RoleBinding of a user to edit, of
// a group to view and of a service account to a Role of its own.
func benchPolicy(b *testing.B, namespaces int) *rbacrules.Cache {
	b.Helper()
	p, err := bootstrap.Load()
	if err != nil {
		b.Fatal(err)
	}
	var objs []runtime.Object
	var all []*rbacv1.ClusterRole
	for i := range p.ClusterRoles {
		all = append(all, &p.ClusterRoles[i])
	}
	// Aggregated roles aggregate each other (view into edit into
	// admin): a few passes reach the fixed point.
	for range 3 {
		for _, r := range all {
			if r.AggregationRule != nil {
				if r.Rules, err = rbacrules.AggregatedRules(r, all); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	for _, r := range all {
		objs = append(objs, r)
	}
	for i := range p.ClusterRoleBindings {
		objs = append(objs, &p.ClusterRoleBindings[i])
	}
	for i := range p.Roles {
		objs = append(objs, &p.Roles[i])
	}
	for i := range p.RoleBindings {
		objs = append(objs, &p.RoleBindings[i])
	}
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	for i := range namespaces {
		ns := fmt.Sprintf("ns-%d", i)
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Rules: []rbacv1.PolicyRule{
				{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}},
			}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dev"}, RoleRef: ref("ClusterRole", "edit"),
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: fmt.Sprintf("dev-%d", i)}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "viewers"}, RoleRef: ref("ClusterRole", "view"),
				Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "viewers"}}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, RoleRef: ref("Role", "app"),
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "app"}}},
		)
	}
	return rbacrules.NewStaticCache(objs...)
}

// BenchmarkRBAC is the cost of one decision, in a cluster with kube's
// bootstrap policy and 1000 namespaces of bindings.
func BenchmarkRBAC(b *testing.B) {
	cache := benchPolicy(b, 1000)
	chain := New(Named{Name: "rbac", Authorizer: NewRBAC(cache)})
	get := func(u user.Info, ns, resource string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: "get", Namespace: ns, Resource: resource, Name: "x", APIVersion: "v1", ResourceRequest: true}
	}
	authenticated := []string{"system:authenticated"}
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"masters", get(&user.DefaultInfo{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}}, "ns-500", "pods"), authorizer.DecisionAllow},
		{"user-rolebinding-edit", get(&user.DefaultInfo{Name: "dev-500", Groups: authenticated}, "ns-500", "pods"), authorizer.DecisionAllow},
		{"group-rolebinding-view", get(&user.DefaultInfo{Name: "someone", Groups: []string{"viewers", "system:authenticated"}}, "ns-500", "deployments"), authorizer.DecisionNoOpinion},
		{"serviceaccount-role", get(&user.DefaultInfo{Name: "system:serviceaccount:ns-500:app",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns-500", "system:authenticated"}}, "ns-500", "secrets"), authorizer.DecisionAllow},
		{"controller-clusterrolebinding", get(&user.DefaultInfo{Name: "system:kube-controller-manager", Groups: authenticated}, "ns-500", "secrets"), authorizer.DecisionAllow},
		{"denied", get(&user.DefaultInfo{Name: "nobody", Groups: authenticated}, "ns-500", "secrets"), authorizer.DecisionNoOpinion},
		{"nonresource", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "nobody", Groups: authenticated}, Verb: "get", Path: "/version"}, authorizer.DecisionAllow},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			if d, _, _ := chain.Authorize(ctx, tc.attrs); d != tc.want {
				b.Fatalf("decision %v, want %v", d, tc.want)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					chain.Authorize(ctx, tc.attrs)
				}
			})
		})
	}
}
