package rbac

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var roleBindings = generic.Resource{
	Name: "rolebindings", Singular: "rolebinding", Kind: "RoleBinding", Namespaced: true,
	New: generic.NewOf[rbacv1.RoleBinding], NewList: generic.NewOf[rbacv1.RoleBindingList],
	Strategy: bindingStrategy{generic.BaseStrategy{Namespaced: true}, roleBindingFields},
	Table:    bindingTable("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]),
}

var clusterRoleBindings = generic.Resource{
	Name: "clusterrolebindings", Singular: "clusterrolebinding", Kind: "ClusterRoleBinding",
	New: generic.NewOf[rbacv1.ClusterRoleBinding], NewList: generic.NewOf[rbacv1.ClusterRoleBindingList],
	Strategy: bindingStrategy{generic.BaseStrategy{}, clusterRoleBindingFields},
	Table:    bindingTable("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
}

// bindingStrategy is the strategy of both kinds of binding, which differ
// in scope and type only: fields reads a binding of the kind.
type bindingStrategy struct {
	generic.BaseStrategy
	fields func(obj runtime.Object) bindingFields
}

func (bindingStrategy) AllowCreateOnUpdate() bool { return true }

// Default implements rest.Defaulter.
func (s bindingStrategy) Default(obj runtime.Object) {
	b := s.fields(obj)
	defaultBinding(b.roleRef, b.subjects)
}

func (s bindingStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateBinding(s.fields(obj), s.Namespaced, nil)
}

// ValidateUpdate refuses a change of roleRef: kube's rule, so that a
// binding's grant can only be changed by deleting and recreating it.
func (s bindingStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	oldB := s.fields(old)
	return validateBinding(s.fields(obj), s.Namespaced, &oldB)
}

// bindingFields are the fields of a binding its strategy looks at (the
// roleRef by pointer: defaulting sets it).
type bindingFields struct {
	meta     *metav1.ObjectMeta
	roleRef  *rbacv1.RoleRef
	subjects []rbacv1.Subject
}

func roleBindingFields(obj runtime.Object) bindingFields {
	b := obj.(*rbacv1.RoleBinding)
	return bindingFields{&b.ObjectMeta, &b.RoleRef, b.Subjects}
}

func clusterRoleBindingFields(obj runtime.Object) bindingFields {
	b := obj.(*rbacv1.ClusterRoleBinding)
	return bindingFields{&b.ObjectMeta, &b.RoleRef, b.Subjects}
}

// validateBinding checks a binding b (of a namespace, or of the cluster),
// an update of old when old is not nil.
func validateBinding(b bindingFields, namespaced bool, old *bindingFields) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(b.meta, namespaced, validateRBACName, field.NewPath("metadata"))
	allErrs = append(allErrs, validateRoleRef(*b.roleRef, !namespaced)...)
	allErrs = append(allErrs, validateSubjects(b.subjects, namespaced)...)
	if old == nil {
		return append(allErrs, requiredNames(*b.roleRef, b.subjects, nil, nil)...)
	}
	allErrs = append(allErrs, corevalidation.ValidateObjectMetaUpdate(b.meta, old.meta, field.NewPath("metadata"))...)
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(internalRoleRef(*b.roleRef), internalRoleRef(*old.roleRef), field.NewPath("roleRef"))...)
	return append(allErrs, requiredNames(*b.roleRef, b.subjects, old.roleRef, old.subjects)...)
}

// internalRoleRef is a RoleRef as kube's validation sees it, its
// internal type, which prints its field names in error messages
// ({"APIGroup":...,"Kind":...,"Name":...}).
type internalRoleRef struct{ APIGroup, Kind, Name string }

// bindingTable is kube's printer of role and cluster role bindings: NAME,
// ROLE (Kind/name) and AGE, and with -o wide the users, groups and
// service accounts bound. what names the kind in the descriptions; kube
// describes ROLE with the v1beta1 field's doc, and so does this.
func bindingTable(what, roleRefDoc string) generic.TablePrinter {
	return generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Role", Type: "string", Description: roleRefDoc},
			generic.AgeColumn,
			{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + what},
			{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + what},
			{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + what},
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			var (
				meta     metav1.ObjectMeta
				ref      rbacv1.RoleRef
				subjects []rbacv1.Subject
			)
			switch b := obj.(type) {
			case *rbacv1.RoleBinding:
				meta, ref, subjects = b.ObjectMeta, b.RoleRef, b.Subjects
			case *rbacv1.ClusterRoleBinding:
				meta, ref, subjects = b.ObjectMeta, b.RoleRef, b.Subjects
			}
			users, groups, sas := []string{}, []string{}, []string{}
			for _, s := range subjects {
				switch s.Kind {
				case rbacv1.ServiceAccountKind:
					sas = append(sas, s.Namespace+"/"+s.Name)
				case rbacv1.UserKind:
					users = append(users, s.Name)
				case rbacv1.GroupKind:
					groups = append(groups, s.Name)
				}
			}
			return []interface{}{meta.Name, fmt.Sprintf("%s/%s", ref.Kind, ref.Name), generic.TranslateTimestampSince(meta.CreationTimestamp),
				strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}, nil
		},
	}
}
