package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRBACValidationAsKube posts invalid roles and bindings and compares
// the whole Status with kube-apiserver 1.37.2's answer to the same body
// (testdata/rbac_errors.json): codes, messages, causes and their order,
// including the errors kube 1.37 reports declaratively.
func TestRBACValidationAsKube(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/rbac_errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Cases []struct {
			Resource   string                 `json:"resource"`
			Namespaced bool                   `json:"namespaced"`
			Body       map[string]interface{} `json:"body"`
			Status     map[string]interface{} `json:"status"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t)
	for i, tc := range golden.Cases {
		t.Run(fmt.Sprintf("%d-%s", i, tc.Resource), func(t *testing.T) {
			path := rbacPath(tc.Resource, "")
			if tc.Namespaced {
				path = rbacPath(tc.Resource, ns)
			}
			got := do(t, "admin-token", http.MethodPost, path, tc.Body).status(t)
			if !reflect.DeepEqual(got, tc.Status) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.Status)
				t.Errorf("\n got %s\nkube %s", g, w)
			}
		})
	}
}

// TestRBACUpdateAsKube: a binding's roleRef cannot change (kube prints the
// role reference as its internal type), declarative errors come last, and
// a PUT creates a role that does not exist.
func TestRBACUpdateAsKube(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	binding := func(name, role string, subject string) map[string]interface{} {
		return map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": map[string]string{"name": name},
			"roleRef": map[string]string{"kind": "ClusterRole", "name": role}, "subjects": []map[string]string{{"kind": "User", "name": subject}}}
	}
	do(t, "admin-token", http.MethodPost, rbacPath("rolebindings", ns), binding("imm", "view", "u")).wantCode(t, http.StatusCreated)
	got := do(t, "admin-token", http.MethodPut, rbacPath("rolebindings", ns)+"/imm", binding("imm", "edit", "")).statusMessage(t, http.StatusUnprocessableEntity)
	want := `RoleBinding.rbac.authorization.k8s.io "imm" is invalid: [roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: field is immutable, subjects[0].name: Required value]`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	role := map[string]interface{}{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": map[string]string{"name": "by-put"},
		"rules": []map[string]interface{}{{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get"}}}}
	do(t, "admin-token", http.MethodPut, rbacPath("roles", ns)+"/by-put", role).wantCode(t, http.StatusCreated)
}

// TestRBACTables: bindings print ROLE and, wide, their subjects; roles
// print NAME and CREATED AT, as kube.
func TestRBACTables(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	ctx := context.Background()
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: ref("ClusterRole", "view"),
		Subjects: []rbacv1.Subject{user("u1"), user("u2"), group("g"), serviceAccount(ns, "sa"), serviceAccount("", "local")}}
	if _, err := admin(t).RbacV1().RoleBindings(ns).Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := do(t, "admin-token", http.MethodGet, rbacPath("rolebindings", ns), nil, "Accept: application/json;as=Table;v=v1;g=meta.k8s.io")
	r.wantCode(t, http.StatusOK)
	var table metav1.Table
	if err := json.Unmarshal(r.body, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, fmt.Sprintf("%s/%d", c.Name, c.Priority))
	}
	if want := "[Name/0 Role/0 Age/0 Users/1 Groups/1 ServiceAccounts/1]"; fmt.Sprint(cols) != want {
		t.Errorf("columns %v, want %s", cols, want)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if cells[0] != "b" || cells[1] != "ClusterRole/view" || cells[3] != "u1, u2" || cells[4] != "g" || cells[5] != ns+"/sa, /local" {
		t.Errorf("cells %q", cells)
	}
	r = do(t, "admin-token", http.MethodGet, rbacPath("clusterroles", "")+"/view", nil, "Accept: application/json;as=Table;v=v1;g=meta.k8s.io")
	if err := json.Unmarshal(r.body, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.ColumnDefinitions) != 2 || table.ColumnDefinitions[1].Name != "Created At" {
		t.Errorf("cluster role columns %+v", table.ColumnDefinitions)
	}
}
