package authz

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

// TestNodeIdentity: a node is a user system:node:NAME in system:nodes,
// as kube's nodeidentifier says.
func TestNodeIdentity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		user     user.Info
		wantName string
		wantNode bool
	}{
		{"no user", nil, "", false},
		{"node", &user.DefaultInfo{Name: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}}, "n1", true},
		{"not in system:nodes", &user.DefaultInfo{Name: "system:node:n1", Groups: []string{"system:authenticated"}}, "", false},
		{"in system:nodes, other name", &user.DefaultInfo{Name: "kubelet", Groups: []string{"system:nodes"}}, "", false},
		{"unnamed node", &user.DefaultInfo{Name: "system:node:", Groups: []string{"system:nodes"}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, isNode := NodeIdentity(tc.user)
			if name != tc.wantName || isNode != tc.wantNode {
				t.Errorf("got %q %v, want %q %v", name, isNode, tc.wantName, tc.wantNode)
			}
		})
	}
}
