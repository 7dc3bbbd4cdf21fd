package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// Roles and cluster roles have no printer in kube: NAME and CREATED AT.
var roles = generic.Resource{
	Name: "roles", Singular: "role", Kind: "Role", Namespaced: true,
	New: generic.NewOf[rbacv1.Role], NewList: generic.NewOf[rbacv1.RoleList],
	Strategy: roleStrategy{generic.BaseStrategy{Namespaced: true}},
}

// roleStrategy is kube's: a PUT may create a role (kubectl auth
// reconcile does), and no resourceVersion is needed to update one.
type roleStrategy struct{ generic.BaseStrategy }

func (roleStrategy) AllowCreateOnUpdate() bool { return true }

func (roleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateRole(obj.(*rbacv1.Role), nil)
}

func (roleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateRole(obj.(*rbacv1.Role), old.(*rbacv1.Role))
}

var clusterRoles = generic.Resource{
	Name: "clusterroles", Singular: "clusterrole", Kind: "ClusterRole",
	New: generic.NewOf[rbacv1.ClusterRole], NewList: generic.NewOf[rbacv1.ClusterRoleList],
	Strategy: clusterRoleStrategy{},
}

type clusterRoleStrategy struct{ generic.BaseStrategy }

func (clusterRoleStrategy) AllowCreateOnUpdate() bool { return true }

func (clusterRoleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateClusterRole(obj.(*rbacv1.ClusterRole), nil)
}

// ValidateUpdate keeps accepting a label value in an aggregation
// selector that the role already had, as kube does.
func (clusterRoleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateClusterRole(obj.(*rbacv1.ClusterRole), old.(*rbacv1.ClusterRole))
}
