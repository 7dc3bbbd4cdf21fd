// Package bootstrap holds kube's bootstrap RBAC policy (every system:*
// role and binding, cluster-admin, admin/edit/view and their
// aggregate-to-* roles, the controller roles, the kube-system and
// kube-public roles) and reconciles it into storage at start, as
// kube-apiserver's rbac/bootstrap-roles hook does: missing objects are
// created; missing rules, aggregation selectors, subjects, labels and
// annotations are added to existing ones, unless they carry
// rbac.authorization.kubernetes.io/autoupdate: "false". Nothing is ever
// removed.
//
// The policy is data recorded from kube-apiserver (policy.json, written by
// hack/record-rbac-policy; its "source" says which version).
package bootstrap

import (
	_ "embed"
	"encoding/json"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
)

//go:embed policy.json
var policyJSON []byte

// Policy is the bootstrap policy.
type Policy struct {
	// Source names the kube-apiserver the policy was recorded from.
	Source              string                      `json:"source"`
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	Roles               []rbacv1.Role               `json:"roles"`
	RoleBindings        []rbacv1.RoleBinding        `json:"roleBindings"`
}

// Load returns the bootstrap policy (a fresh copy each call).
func Load() (*Policy, error) {
	p := &Policy{}
	if err := json.Unmarshal(policyJSON, p); err != nil {
		return nil, fmt.Errorf("bootstrap policy: %w", err)
	}
	return p, nil
}
