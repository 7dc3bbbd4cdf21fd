package core

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestComponentStatuses: what kube-apiserver v1.37.2 reports (recorded
// from the reference): etcd-0 from the server's own etcd, and the
// controller manager and scheduler probed on their default ports of this
// host (unhealthy unless something answers there); get and list only.
func TestComponentStatuses(t *testing.T) {
	t.Parallel()
	cs := clientset(t).CoreV1().ComponentStatuses()
	list, err := cs.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list.Items {
		names = append(names, c.Name)
		if len(c.Conditions) != 1 || c.Conditions[0].Type != corev1.ComponentHealthy {
			t.Errorf("%s: conditions %+v, want one of type Healthy", c.Name, c.Conditions)
		}
	}
	slices.Sort(names)
	if want := []string{"controller-manager", "etcd-0", "scheduler"}; !slices.Equal(names, want) {
		t.Errorf("components %q, want %q", names, want)
	}
	etcd, err := cs.Get(t.Context(), "etcd-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}}
	if !slices.Equal(etcd.Conditions, want) || etcd.ResourceVersion != "" {
		t.Errorf("etcd-0: %+v (resourceVersion %q), want %+v and none", etcd.Conditions, etcd.ResourceVersion, want)
	}
	byName, err := cs.List(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	if len(byName.Items) != 1 || byName.Items[0].Name != "scheduler" {
		t.Errorf("field selector metadata.name=scheduler: %d items", len(byName.Items))
	}

	// kube's answers, recorded from the reference.
	for _, tc := range []struct {
		name, method, path string
		want               map[string]any
	}{
		{"unknown", http.MethodGet, "/api/v1/componentstatuses/nope", map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": `componentstatus "nope" not found`, "reason": "NotFound",
			"details": map[string]any{"name": "nope", "kind": "componentstatus"}, "code": 404.0,
		}},
		{"watch", http.MethodGet, "/api/v1/componentstatuses?watch=1", map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": `watch is not supported on resources of kind "componentstatuses"`, "reason": "MethodNotAllowed",
			"details": map[string]any{"kind": "componentstatuses"}, "code": 405.0,
		}},
		{"create", http.MethodPost, "/api/v1/componentstatuses", map[string]any{
			"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure",
			"message": "the server does not allow this method on the requested resource", "reason": "MethodNotAllowed",
			"details": map[string]any{}, "code": 405.0,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.method == http.MethodPost {
				body = "{}"
			}
			r := do(t, tc.method, tc.path, body)
			var got map[string]any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatalf("%d %s", r.code, r.body)
			}
			if int(tc.want["code"].(float64)) != r.code || !jsonEqual(got, tc.want) {
				t.Errorf("%d %s\nwant %v", r.code, r.body, tc.want)
			}
		})
	}

	columns, rows := tableRows(t, "/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0")
	if want := []string{"Name", "Status", "Message", "Error"}; !slices.Equal(columns, want) {
		t.Errorf("columns %q, want %q", columns, want)
	}
	if len(rows) != 1 || !slices.Equal(rows[0], []any{"etcd-0", "Healthy", "ok", ""}) {
		t.Errorf("rows %v", rows)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
