package rbac_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rbac"
	"github.com/miniapiserver/miniapiserver/pkg/registry/registrytest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// asMaster writes as a member of system:masters, whom the escalation
// checks let through.
func asMaster(ctx context.Context) context.Context {
	return request.WithUser(ctx, &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}})
}

var rules = []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}}

// TestRegistry runs the registry's conformance suite on the four kinds.
func TestRegistry(t *testing.T) {
	t.Parallel()
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}
	for _, tc := range []struct {
		resource       string
		valid, invalid func(name string) runtime.Object
		change         func(obj runtime.Object)
	}{
		{
			resource: "roles",
			valid: func(name string) runtime.Object {
				return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
			},
			invalid: func(name string) runtime.Object {
				return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{Resources: []string{"pods"}}}}
			},
			change: func(obj runtime.Object) { obj.(*rbacv1.Role).Rules[0].Verbs = []string{"get", "list"} },
		},
		{
			resource: "clusterroles",
			valid: func(name string) runtime.Object {
				return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
			},
			invalid: func(name string) runtime.Object {
				return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{Resources: []string{"pods"}}}}
			},
			change: func(obj runtime.Object) { obj.(*rbacv1.ClusterRole).Rules[0].Verbs = []string{"get", "list"} },
		},
		{
			resource: "rolebindings",
			valid: func(name string) runtime.Object {
				return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}}
			},
			invalid: func(name string) runtime.Object {
				return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Pod", Name: "r"}}
			},
			change: func(obj runtime.Object) { obj.(*rbacv1.RoleBinding).Subjects[0].Name = "bob" },
		},
		{
			resource: "clusterrolebindings",
			valid: func(name string) runtime.Object {
				return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "r"}}
			},
			invalid: func(name string) runtime.Object {
				return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}}
			},
			change: func(obj runtime.Object) { obj.(*rbacv1.ClusterRoleBinding).Subjects[0].Name = "bob" },
		},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			t.Parallel()
			info := registrytest.BuildGroup(t, rbac.RESTStorageProvider{})
			tr := registrytest.Tester{
				Storage:                  registrytest.Storage(t, info, tc.resource).(registrytest.ResourceStorage),
				Valid:                    tc.valid,
				Invalid:                  tc.invalid,
				Change:                   tc.change,
				Context:                  asMaster,
				AllowCreateOnUpdate:      true,
				AllowUnconditionalUpdate: true,
			}
			tr.Run(t)
		})
	}
}
