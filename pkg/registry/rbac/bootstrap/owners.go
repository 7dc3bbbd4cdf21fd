package bootstrap

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ruleOwner is a Role or ClusterRole, as reconciling sees it.
type ruleOwner interface {
	kind() string
	object() runtime.Object
	meta() *metav1.ObjectMeta
	rules() []rbacv1.PolicyRule
	setRules([]rbacv1.PolicyRule)
	aggregationRule() *rbacv1.AggregationRule
	setAggregationRule(*rbacv1.AggregationRule)
	// from wraps a stored object of the same kind.
	from(obj runtime.Object) ruleOwner
}

type role struct{ *rbacv1.Role }

func (r role) kind() string                               { return "role" }
func (r role) object() runtime.Object                     { return r.Role }
func (r role) meta() *metav1.ObjectMeta                   { return &r.ObjectMeta }
func (r role) rules() []rbacv1.PolicyRule                 { return r.Rules }
func (r role) setRules(rules []rbacv1.PolicyRule)         { r.Rules = rules }
func (r role) aggregationRule() *rbacv1.AggregationRule   { return nil }
func (r role) setAggregationRule(*rbacv1.AggregationRule) {}
func (r role) from(obj runtime.Object) ruleOwner          { return role{obj.(*rbacv1.Role)} }

type clusterRole struct{ *rbacv1.ClusterRole }

func (r clusterRole) kind() string                                 { return "clusterrole" }
func (r clusterRole) object() runtime.Object                       { return r.ClusterRole }
func (r clusterRole) meta() *metav1.ObjectMeta                     { return &r.ObjectMeta }
func (r clusterRole) rules() []rbacv1.PolicyRule                   { return r.Rules }
func (r clusterRole) setRules(rules []rbacv1.PolicyRule)           { r.Rules = rules }
func (r clusterRole) aggregationRule() *rbacv1.AggregationRule     { return r.AggregationRule }
func (r clusterRole) setAggregationRule(a *rbacv1.AggregationRule) { r.AggregationRule = a }
func (r clusterRole) from(obj runtime.Object) ruleOwner {
	return clusterRole{obj.(*rbacv1.ClusterRole)}
}

// bindingOwner is a RoleBinding or ClusterRoleBinding, as reconciling
// sees it.
type bindingOwner interface {
	kind() string
	object() runtime.Object
	meta() *metav1.ObjectMeta
	roleRef() rbacv1.RoleRef
	subjects() []rbacv1.Subject
	setSubjects([]rbacv1.Subject)
	from(obj runtime.Object) bindingOwner
}

type roleBinding struct{ *rbacv1.RoleBinding }

func (b roleBinding) kind() string                   { return "rolebinding" }
func (b roleBinding) object() runtime.Object         { return b.RoleBinding }
func (b roleBinding) meta() *metav1.ObjectMeta       { return &b.ObjectMeta }
func (b roleBinding) roleRef() rbacv1.RoleRef        { return b.RoleRef }
func (b roleBinding) subjects() []rbacv1.Subject     { return b.Subjects }
func (b roleBinding) setSubjects(s []rbacv1.Subject) { b.Subjects = s }
func (b roleBinding) from(obj runtime.Object) bindingOwner {
	return roleBinding{obj.(*rbacv1.RoleBinding)}
}

type clusterRoleBinding struct{ *rbacv1.ClusterRoleBinding }

func (b clusterRoleBinding) kind() string                   { return "clusterrolebinding" }
func (b clusterRoleBinding) object() runtime.Object         { return b.ClusterRoleBinding }
func (b clusterRoleBinding) meta() *metav1.ObjectMeta       { return &b.ObjectMeta }
func (b clusterRoleBinding) roleRef() rbacv1.RoleRef        { return b.RoleRef }
func (b clusterRoleBinding) subjects() []rbacv1.Subject     { return b.Subjects }
func (b clusterRoleBinding) setSubjects(s []rbacv1.Subject) { b.Subjects = s }
func (b clusterRoleBinding) from(obj runtime.Object) bindingOwner {
	return clusterRoleBinding{obj.(*rbacv1.ClusterRoleBinding)}
}
