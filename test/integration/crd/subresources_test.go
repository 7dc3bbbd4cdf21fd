package crd

import (
	"fmt"
	"net/http"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestStatusSubresourceAndGeneration: with a status subresource, the
// main endpoint keeps the status and /status keeps the rest; the
// generation counts changes of everything but metadata and status.
func TestStatusSubresourceAndGeneration(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	w := widget(t, gvr, "w1", "{color: red}")
	w.Object["status"] = map[string]interface{}{"ready": true}
	created, err := client.Create(ctx(t), w, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.Object["status"]; ok || created.GetGeneration() != 1 {
		t.Errorf("create: status %v kept, generation %d", created.Object["status"], created.GetGeneration())
	}

	created.Object["status"] = map[string]interface{}{"ready": true}
	_ = unstructured.SetNestedField(created.Object, int64(2), "spec", "replicas")
	updated, err := client.Update(ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := updated.Object["status"]; ok || updated.GetGeneration() != 2 {
		t.Errorf("spec update: status %v, generation %d (want no status, 2)", updated.Object["status"], updated.GetGeneration())
	}

	updated.SetLabels(map[string]string{"a": "b"})
	labelled, err := client.Update(ctx(t), updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if labelled.GetGeneration() != 2 {
		t.Errorf("metadata update: generation %d, want 2", labelled.GetGeneration())
	}

	labelled.Object["status"] = map[string]interface{}{"ready": true, "replicas": int64(2), "selector": "a=b"}
	_ = unstructured.SetNestedField(labelled.Object, "blue", "spec", "color")
	status, err := client.UpdateStatus(ctx(t), labelled, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	color, _, _ := unstructured.NestedString(status.Object, "spec", "color")
	ready, _, _ := unstructured.NestedBool(status.Object, "status", "ready")
	if color != "red" || !ready || status.GetGeneration() != 2 {
		t.Errorf("status update: color %q (want red), ready %v, generation %d", color, ready, status.GetGeneration())
	}

	_, err = client.Patch(ctx(t), "w1", types.MergePatchType, []byte(`{"status":{"replicas":"many"}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsInvalid(err) || err.Error() != fmt.Sprintf(`Widget.%s "w1" is invalid: [status.replicas: Invalid value: "string": replicas in body must be of type integer: "string", `+
		`.status.replicas: Invalid value: 0: .status.replicas accessor error: many is of the type string, expected int64, `+
		`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`, gvr.Group) {
		t.Errorf("invalid status: %v", err)
	}
}

// TestScaleSubresource: /scale reads the replicas, the status replicas
// and the selector at the paths the definition names, and sets the spec
// replicas through the main resource (a new generation).
func TestScaleSubresource(t *testing.T) {
	t.Parallel()
	gvr := widgets(t)
	ns := namespace(t)
	client := dyn(t).Resource(gvr).Namespace(ns)
	if _, err := client.Create(ctx(t), widget(t, gvr, "w1", "{color: red, replicas: 2}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Patch(ctx(t), "w1", types.MergePatchType, []byte(`{"status":{"replicas":1,"selector":"app=w1"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/apis/%s/namespaces/%s/widgets/w1/scale", gvr.GroupVersion(), ns)
	code, body := do(t, http.MethodGet, path, "", nil)
	scale := &autoscalingv1.Scale{}
	if code != http.StatusOK || decodeJSON(body, scale) != nil {
		t.Fatalf("GET scale: %d %s", code, body)
	}
	if scale.Kind != "Scale" || scale.APIVersion != "autoscaling/v1" || scale.Spec.Replicas != 2 || scale.Status.Replicas != 1 || scale.Status.Selector != "app=w1" {
		t.Errorf("scale %+v", scale)
	}
	scale.Spec.Replicas = 5
	code, body = do(t, http.MethodPut, path, "application/json", encodeJSON(t, scale))
	if code != http.StatusOK {
		t.Fatalf("PUT scale: %d %s", code, body)
	}
	got, err := client.Get(ctx(t), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 || got.GetGeneration() != 2 {
		t.Errorf("after the scale update: replicas %d, generation %d", r, got.GetGeneration())
	}
	code, body = do(t, http.MethodPatch, path, "application/merge-patch+json", []byte(`{"spec":{"replicas":-1}}`))
	if code != http.StatusUnprocessableEntity {
		t.Errorf("negative replicas: %d %s", code, body)
	}
}
