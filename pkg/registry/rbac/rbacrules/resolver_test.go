package rbacrules

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

func rule(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func subject(kind, name, ns string) rbacv1.Subject {
	return rbacv1.Subject{Kind: kind, Name: name, Namespace: ns}
}

func crb(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}, Subjects: subjects}
}

func rb(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func newTestCache(objs ...runtime.Object) *Cache { return NewStaticCache(objs...) }

// sources returns the descriptions of the bindings whose rules apply to u
// in ns, in visiting order, and the errors met.
func sources(r *Resolver, u user.Info, ns string) ([]string, []string) {
	var srcs, errs []string
	r.VisitRulesFor(context.Background(), u, ns, func(source fmt.Stringer, _ *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err.Error())
			return true
		}
		s := source.String()
		if len(srcs) == 0 || srcs[len(srcs)-1] != s {
			srcs = append(srcs, s)
		}
		return true
	})
	return srcs, errs
}

func TestResolverSubjects(t *testing.T) {
	c := newTestCache(
		clusterRole("reader", rule("get", "pods")),
		role("ns1", "writer", rule("create", "pods")),
		crb("users", "reader", subject("User", "alice", ""), subject("Group", "devs", "")),
		crb("sa", "reader", subject("ServiceAccount", "robot", "ns1")),
		crb("sa-without-namespace", "reader", subject("ServiceAccount", "robot", "")),
		rb("ns1", "local-sa", "Role", "writer", subject("ServiceAccount", "robot", "")),
		rb("ns1", "cluster-role-here", "ClusterRole", "reader", subject("Group", "system:serviceaccounts:ns1", "")),
		rb("ns2", "elsewhere", "ClusterRole", "reader", subject("User", "alice", "")),
		rb("ns1", "missing", "Role", "nope", subject("User", "alice", "")),
		rb("ns1", "twice", "Role", "writer", subject("Group", "devs", ""), subject("User", "alice", "")),
	)
	r := NewResolver(c, nil)
	robot := &user.DefaultInfo{Name: "system:serviceaccount:ns1:robot", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns1", "system:authenticated"}}
	for _, tc := range []struct {
		name     string
		u        user.Info
		ns       string
		want     []string
		wantErrs []string
	}{
		{"user, cluster-wide", &user.DefaultInfo{Name: "alice"}, "", []string{`ClusterRoleBinding "users" of ClusterRole "reader" to User "alice"`}, nil},
		{"group", &user.DefaultInfo{Name: "bob", Groups: []string{"devs"}}, "", []string{`ClusterRoleBinding "users" of ClusterRole "reader" to Group "devs"`}, nil},
		{"user and group: the first subject that matches names the binding", &user.DefaultInfo{Name: "alice", Groups: []string{"devs"}}, "ns1", []string{
			`ClusterRoleBinding "users" of ClusterRole "reader" to User "alice"`,
			`RoleBinding "twice/ns1" of Role "writer" to Group "devs"`,
		}, []string{`role.rbac.authorization.k8s.io "nope" not found`}},
		{"service account: cluster, namespace default, group", robot, "ns1", []string{
			`ClusterRoleBinding "sa" of ClusterRole "reader" to ServiceAccount "robot/ns1"`,
			`RoleBinding "local-sa/ns1" of Role "writer" to ServiceAccount "robot/ns1"`,
			`RoleBinding "cluster-role-here/ns1" of ClusterRole "reader" to Group "system:serviceaccounts:ns1"`,
		}, nil},
		{"service account in another namespace", &user.DefaultInfo{Name: "system:serviceaccount:ns2:robot"}, "ns1", nil, nil},
		{"a role binding only applies in its namespace", &user.DefaultInfo{Name: "alice"}, "ns2", []string{
			`ClusterRoleBinding "users" of ClusterRole "reader" to User "alice"`,
			`RoleBinding "elsewhere/ns2" of ClusterRole "reader" to User "alice"`,
		}, nil},
		{"nobody", &user.DefaultInfo{Name: "mallory", Groups: []string{"system:authenticated"}}, "ns1", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := sources(r, tc.u, tc.ns)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("sources:\n got %q\nwant %q", got, tc.want)
			}
			if strings.Join(errs, "\n") != strings.Join(tc.wantErrs, "\n") {
				t.Errorf("errors: got %q, want %q", errs, tc.wantErrs)
			}
		})
	}
}

func TestCacheUpdatesIndex(t *testing.T) {
	c := newTestCache(clusterRole("reader", rule("get", "pods")), crb("b", "reader", subject("User", "alice", "")))
	r := NewResolver(c, nil)
	alice, bob := &user.DefaultInfo{Name: "alice"}, &user.DefaultInfo{Name: "bob"}
	count := func(u user.Info) int {
		got, _ := sources(r, u, "")
		return len(got)
	}
	if count(alice) != 1 || count(bob) != 0 {
		t.Fatalf("before: alice %d, bob %d", count(alice), count(bob))
	}
	// The binding changes subjects: the index follows.
	c.put(crb("b", "reader", subject("User", "bob", "")))
	if count(alice) != 0 || count(bob) != 1 {
		t.Errorf("after update: alice %d, bob %d", count(alice), count(bob))
	}
	c.remove(crb("b", "", nil...))
	if count(bob) != 0 {
		t.Errorf("after delete: bob %d", count(bob))
	}
	c.replace("ClusterRoleBinding", []runtime.Object{crb("c", "reader", subject("User", "alice", ""))})
	if count(alice) != 1 || count(bob) != 0 {
		t.Errorf("after relist: alice %d, bob %d", count(alice), count(bob))
	}
	if len(c.clusterBindings.byUser) != 1 || len(c.clusterBindings.byGroup) != 0 {
		t.Errorf("index keys left behind: %v %v", c.clusterBindings.byUser, c.clusterBindings.byGroup)
	}
}

func TestConfirmNoEscalation(t *testing.T) {
	c := newTestCache(
		clusterRole("reader", rule("get", "pods"), rule("list", "pods")),
		crb("b", "reader", subject("User", "alice", "")),
		rb("ns", "broken", "Role", "missing", subject("User", "alice", "")),
	)
	r := NewResolver(c, nil)
	ctx := request.WithNamespace(request.WithUser(context.Background(), &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}), "ns")
	if err := ConfirmNoEscalation(ctx, r, []rbacv1.PolicyRule{rule("get", "pods")}); err != nil {
		t.Errorf("granting what she holds: %v", err)
	}
	err := ConfirmNoEscalation(ctx, r, []rbacv1.PolicyRule{
		{Verbs: []string{"get", "delete", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "secrets"}},
	})
	want := `user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}
{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete" "watch"]}; resolution errors: [role.rbac.authorization.k8s.io "missing" not found]`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
