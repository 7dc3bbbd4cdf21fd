package apply

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestDynamicApply applies with the dynamic client: Apply (which sends
// the object as an apply patch), a raw apply patch in YAML, ApplyStatus,
// and dry runs.
func TestDynamicApply(t *testing.T) {
	ns := newNamespace(t, "dynamic")
	configMaps := dynamicClient(t).Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	cm := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"}, "data": data,
		}}
	}

	created, err := configMaps.Apply(ctx(t), "cfg", cm(map[string]any{"a": "1", "b": "2"}), metav1.ApplyOptions{FieldManager: "one"})
	if err != nil {
		t.Fatalf("apply creating: %v", err)
	}
	if e := entry(t, created, "one", ""); e.Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("entry %+v", e)
	}
	wantFields(t, entry(t, created, "one", ""), `{"f:data":{"f:a":{},"f:b":{}}}`)

	t.Run("yaml patch", func(t *testing.T) {
		yaml := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels:\n    team: two\ndata:\n  c: \"3\"\n"
		got, err := configMaps.Patch(ctx(t), "cfg", types.ApplyYAMLPatchType, []byte(yaml), metav1.PatchOptions{FieldManager: "two"})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetLabels()["team"] != "two" || got.Object["data"].(map[string]any)["c"] != "3" {
			t.Errorf("applied: %v", got.Object)
		}
		wantFields(t, entry(t, got, "two", ""), `{"f:data":{"f:c":{}},"f:metadata":{"f:labels":{"f:team":{}}}}`)
	})

	t.Run("conflict then force", func(t *testing.T) {
		_, err := configMaps.Apply(ctx(t), "cfg", cm(map[string]any{"a": "x"}), metav1.ApplyOptions{FieldManager: "two"})
		if !apierrors.IsConflict(err) || err.Error() != `Apply failed with 1 conflict: conflict with "one": .data.a` {
			t.Fatalf("want one's conflict on a, got %v", err)
		}
		got, err := configMaps.Apply(ctx(t), "cfg", cm(map[string]any{"a": "x"}), metav1.ApplyOptions{FieldManager: "two", Force: true})
		if err != nil {
			t.Fatal(err)
		}
		// two's configuration is now only a: it gives up c and its label.
		if _, ok := got.Object["data"].(map[string]any)["c"]; ok || got.GetLabels()["team"] != "" {
			t.Errorf("fields two dropped are still there: %v", got.Object)
		}
		wantFields(t, entry(t, got, "two", ""), `{"f:data":{"f:a":{}}}`)
		wantFields(t, entry(t, got, "one", ""), `{"f:data":{"f:b":{}}}`)
	})

	t.Run("dry run", func(t *testing.T) {
		got, err := configMaps.Apply(ctx(t), "other", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "other"},
		}}, metav1.ApplyOptions{FieldManager: "one", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.GetManagedFields()) != 0 {
			t.Errorf("an apply of nothing owns nothing: %+v", got.GetManagedFields())
		}
		if _, err := configMaps.Get(ctx(t), "other", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("dry run stored the object: %v", err)
		}
	})

	t.Run("status", func(t *testing.T) {
		deployments := dynamicClient(t).Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
		d := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
					"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}},
				},
			},
		}}
		if _, err := deployments.ApplyStatus(ctx(t), "d", d, metav1.ApplyOptions{FieldManager: "one"}); !apierrors.IsNotFound(err) {
			t.Fatalf("status apply of a missing deployment: want not found, got %v", err)
		}
		if _, err := deployments.Apply(ctx(t), "d", d, metav1.ApplyOptions{FieldManager: "one"}); err != nil {
			t.Fatal(err)
		}
		status := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"},
			"status": map[string]any{"replicas": int64(1)},
		}}
		got, err := deployments.ApplyStatus(ctx(t), "d", status, metav1.ApplyOptions{FieldManager: "controller"})
		if err != nil {
			t.Fatal(err)
		}
		e := entry(t, got, "controller", "status")
		wantFields(t, e, `{"f:status":{"f:replicas":{}}}`)
	})
}
