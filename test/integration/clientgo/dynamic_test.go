package clientgo

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func unstructuredDeployment(name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"via": "dynamic"}},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.25"}}},
			},
		},
	}}
}

// TestDynamic drives Deployments through the dynamic client (JSON,
// unstructured objects): CRUD, list, watch, the status and scale
// subresources, apply, and a cluster-scoped resource.
func TestDynamic(t *testing.T) {
	ns := namespace(t)
	dyn := dynamic.NewForConfigOrDie(config())
	deployments := dyn.Resource(deploymentsGVR).Namespace(ns)

	w, err := deployments.Watch(ctx(t), metav1.ListOptions{LabelSelector: "via=dynamic"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := deployments.Create(ctx(t), unstructuredDeployment("web", 2), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The server's defaults come back in the unstructured object.
	if v, _, _ := unstructured.NestedString(created.Object, "spec", "strategy", "type"); v != "RollingUpdate" || created.GetGeneration() != 1 {
		t.Errorf("created: %v", created.Object)
	}
	created.SetAnnotations(map[string]string{"updated": "yes"})
	if err := unstructured.SetNestedField(created.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	updated, err := deployments.Update(ctx(t), created, metav1.UpdateOptions{})
	if err != nil || updated.GetGeneration() != 2 {
		t.Fatalf("update: %v %v", err, updated)
	}
	patched, err := deployments.Patch(ctx(t), "web", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.26"}]`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(patched.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 || containers[0].(map[string]any)["image"] != "nginx:1.26" || patched.GetGeneration() != 3 {
		t.Errorf("patched: %v", patched.Object)
	}
	status := patched.DeepCopy()
	if err := unstructured.SetNestedField(status.Object, int64(3), "status", "observedGeneration"); err != nil {
		t.Fatal(err)
	}
	withStatus, err := deployments.UpdateStatus(ctx(t), status, metav1.UpdateOptions{})
	if g, _, _ := unstructured.NestedInt64(withStatus.Object, "status", "observedGeneration"); err != nil || g != 3 || withStatus.GetGeneration() != 3 {
		t.Errorf("update status: %v %v", err, withStatus)
	}
	scale, err := deployments.Get(ctx(t), "web", metav1.GetOptions{}, "scale")
	if err != nil || scale.GetKind() != "Scale" || scale.GetAPIVersion() != "autoscaling/v1" {
		t.Fatalf("scale: %v %v", err, scale)
	}
	applied, err := deployments.Apply(ctx(t), "web", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "labels": map[string]any{"applied": "yes"}},
	}}, metav1.ApplyOptions{FieldManager: "dynamic-test"})
	if err != nil || applied.GetLabels()["applied"] != "yes" || applied.GetLabels()["via"] != "dynamic" {
		t.Fatalf("apply: %v %v", err, applied)
	}
	if _, err := deployments.Create(ctx(t), unstructuredDeployment("api", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := deployments.List(ctx(t), metav1.ListOptions{LabelSelector: "via=dynamic", Limit: 1})
	if err != nil || len(list.Items) != 1 || list.GetContinue() == "" || list.GetKind() != "DeploymentList" {
		t.Fatalf("list page: %v %+v", err, list)
	}
	rest, err := deployments.List(ctx(t), metav1.ListOptions{LabelSelector: "via=dynamic", Continue: list.GetContinue()})
	if err != nil || len(rest.Items) != 1 || rest.Items[0].GetName() == list.Items[0].GetName() {
		t.Fatalf("second page: %v %+v", err, rest)
	}
	if err := deployments.Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := deployments.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "via=dynamic"}); err != nil {
		t.Fatal(err)
	}
	// The watch saw every change of both, in order.
	want := []string{"ADDED web", "MODIFIED web", "MODIFIED web", "MODIFIED web", "MODIFIED web", "ADDED api", "DELETED web", "DELETED api"}
	for i, wantEvent := range want {
		select {
		case e := <-w.ResultChan():
			u, ok := e.Object.(*unstructured.Unstructured)
			if !ok || string(e.Type)+" "+u.GetName() != wantEvent {
				t.Fatalf("event %d: %s %v, want %s", i, e.Type, e.Object, wantEvent)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d (%s) did not come", i, wantEvent)
		}
	}
	if e, ok := nonBlocking(w); ok {
		t.Errorf("an extra event: %s", e.Type)
	}

	t.Run("cluster scoped", func(t *testing.T) {
		pvs := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"})
		pv := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolume", "metadata": map[string]any{"name": ns + "-pv"},
			"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"}, "accessModes": []any{"ReadWriteOnce"}, "hostPath": map[string]any{"path": "/data"}},
		}}
		created, err := pvs.Create(ctx(t), pv, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase, _, _ := unstructured.NestedString(created.Object, "status", "phase"); phase != "Pending" || len(created.GetFinalizers()) != 1 {
			t.Errorf("created %v", created.Object)
		}
		if err := pvs.Delete(ctx(t), ns+"-pv", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pvs.Get(ctx(t), ns+"-pv", metav1.GetOptions{})
		if err != nil || got.GetDeletionTimestamp() == nil {
			t.Fatalf("the volume protection finalizer should hold it: %v %v", err, got)
		}
		if _, err := pvs.Patch(ctx(t), ns+"-pv", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	})
}

func nonBlocking(w watch.Interface) (watch.Event, bool) {
	select {
	case e := <-w.ResultChan():
		return e, true
	default:
		return watch.Event{}, false
	}
}
