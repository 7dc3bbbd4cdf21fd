package workloads

import (
	"encoding/json"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// createFromTestdata creates the object of testdata/defaults/<name>.in.json
// in ns and returns it.
func (e *env) createFromTestdata(t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/defaults/" + name + ".in.json")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	created, err := e.dynamic.Resource(kindResources[obj.GetKind()]).Namespace(ns).Create(ctx(t), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	return created
}

// step is one change to an object and what kube does to its generation.
type step struct {
	what        string
	subresource string // "" or "status"
	patch       string // JSON merge patch (strategic for pods)
	bump        bool   // generation goes up by one
	check       func(t *testing.T, obj *unstructured.Unstructured)
}

// testGeneration: generation starts at 1 and goes up exactly when kube's
// strategies bump it: spec changes (and annotations for deployments; pods
// too, since kube tracks pod generation), not labels nor status.
func testGeneration(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-generation")
	labelsOnly := step{what: "labels", patch: `{"metadata":{"labels":{"touched":"yes"}}}`}
	annotations := step{what: "annotations", patch: `{"metadata":{"annotations":{"touched":"yes"}}}`}
	for _, tc := range []struct {
		testdata string
		steps    []step
	}{
		{"pod-minimal", []step{
			labelsOnly, annotations,
			{what: "image", patch: `{"spec":{"containers":[{"name":"c","image":"nginx:2"}]}}`, bump: true},
			{what: "status", subresource: "status", patch: `{"status":{"phase":"Running"}}`},
			{what: "shorter deadline", patch: `{"spec":{"activeDeadlineSeconds":60}}`, bump: true},
		}},
		{"podtemplate", []step{
			labelsOnly,
			{what: "template labels", patch: `{"template":{"metadata":{"labels":{"x":"y"}}}}`, bump: true},
		}},
		{"replicationcontroller", []step{
			labelsOnly, annotations,
			{what: "replicas", patch: `{"spec":{"replicas":3}}`, bump: true},
			{what: "status", subresource: "status", patch: `{"status":{"replicas":2}}`},
		}},
		{"deployment", []step{
			labelsOnly,
			{what: "annotations", patch: `{"metadata":{"annotations":{"touched":"yes"}}}`, bump: true},
			{what: "paused", patch: `{"spec":{"paused":true}}`, bump: true},
			{what: "status", subresource: "status", patch: `{"status":{"replicas":2,"readyReplicas":1}}`},
		}},
		{"replicaset", []step{
			labelsOnly, annotations,
			{what: "minReadySeconds", patch: `{"spec":{"minReadySeconds":5}}`, bump: true},
			{what: "status", subresource: "status", patch: `{"status":{"replicas":2}}`},
		}},
		{"statefulset", []step{
			labelsOnly, annotations,
			{what: "replicas", patch: `{"spec":{"replicas":3}}`, bump: true},
			{what: "partition", patch: `{"spec":{"updateStrategy":{"rollingUpdate":{"partition":1}}}}`, bump: true},
			{what: "status", subresource: "status", patch: `{"status":{"replicas":2}}`},
		}},
		{"daemonset", []step{
			labelsOnly,
			{what: "minReadySeconds", patch: `{"spec":{"minReadySeconds":5}}`, bump: true, check: templateGeneration("1")},
			{what: "template", patch: `{"spec":{"template":{"metadata":{"labels":{"app":"a","v":"2"}}}}}`, bump: true, check: templateGeneration("2")},
			{what: "template generation set by a client", patch: `{"metadata":{"annotations":{"deprecated.daemonset.template.generation":"9"}}}`, check: templateGeneration("2")},
			{what: "status", subresource: "status", patch: `{"status":{"numberReady":1}}`},
		}},
	} {
		t.Run(tc.testdata, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, tc.testdata)
			if g := obj.GetGeneration(); g != 1 {
				t.Fatalf("generation on create: %d, want 1", g)
			}
			client := e.dynamic.Resource(kindResources[obj.GetKind()]).Namespace(ns)
			patchType := types.MergePatchType
			if obj.GetKind() == "Pod" {
				patchType = types.StrategicMergePatchType
			}
			for _, s := range tc.steps {
				before := obj.GetGeneration()
				var subresources []string
				if s.subresource != "" {
					subresources = []string{s.subresource}
				}
				updated, err := client.Patch(ctx(t), obj.GetName(), patchType, []byte(s.patch), metav1.PatchOptions{}, subresources...)
				if err != nil {
					t.Fatalf("%s: %v", s.what, err)
				}
				want := before
				if s.bump {
					want++
				}
				if g := updated.GetGeneration(); g != want {
					t.Errorf("%s: generation %d, want %d", s.what, g, want)
				}
				if s.check != nil {
					s.check(t, updated)
				}
				obj = updated
			}
		})
	}
	t.Run("controllerrevision has none", func(t *testing.T) {
		cr := e.createFromTestdata(t, ns, "controllerrevision")
		if g := cr.GetGeneration(); g != 0 {
			t.Errorf("generation %d, want none", g)
		}
	})
}

func templateGeneration(want string) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, obj *unstructured.Unstructured) {
		t.Helper()
		if got := obj.GetAnnotations()["deprecated.daemonset.template.generation"]; got != want {
			t.Errorf("template generation %q, want %q", got, want)
		}
	}
}

// testStatusSubresource: the main resource keeps the status, /status keeps
// the spec (and, for deployments, the labels).
func testStatusSubresource(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-status")
	for _, tc := range []struct {
		testdata   string
		status     string // merge patch through /status, also changing spec and labels
		statusPath []string
		specPath   []string
		keepLabels bool
	}{
		{"deployment", `{"metadata":{"labels":{"s":"1"}},"spec":{"replicas":7},"status":{"replicas":2}}`, []string{"status", "replicas"}, []string{"spec", "replicas"}, true},
		{"replicaset", `{"metadata":{"labels":{"s":"1"}},"spec":{"replicas":7},"status":{"replicas":2}}`, []string{"status", "replicas"}, []string{"spec", "replicas"}, false},
		{"statefulset", `{"metadata":{"labels":{"s":"1"}},"spec":{"replicas":7},"status":{"replicas":2}}`, []string{"status", "replicas"}, []string{"spec", "replicas"}, false},
		{"daemonset", `{"metadata":{"labels":{"s":"1"}},"spec":{"minReadySeconds":7},"status":{"numberReady":2}}`, []string{"status", "numberReady"}, []string{"spec", "minReadySeconds"}, false},
		{"replicationcontroller", `{"metadata":{"labels":{"s":"1"}},"spec":{"replicas":7},"status":{"replicas":2}}`, []string{"status", "replicas"}, []string{"spec", "replicas"}, false},
		{"pod-minimal", `{"metadata":{"labels":{"s":"1"}},"spec":{"activeDeadlineSeconds":7},"status":{"phase":"Running"}}`, []string{"status", "phase"}, []string{"spec", "activeDeadlineSeconds"}, false},
	} {
		t.Run(tc.testdata, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, tc.testdata)
			client := e.dynamic.Resource(kindResources[obj.GetKind()]).Namespace(ns)
			specBefore, _, _ := unstructured.NestedFieldNoCopy(obj.Object, tc.specPath...)
			statusBefore, _, _ := unstructured.NestedFieldNoCopy(obj.Object, tc.statusPath...)

			updated, err := client.Patch(ctx(t), obj.GetName(), types.MergePatchType, []byte(tc.status), metav1.PatchOptions{}, "status")
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(updated.Object, tc.specPath...); !jsonEqual(got, specBefore) {
				t.Errorf("/status changed %v to %v", tc.specPath, got)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(updated.Object, tc.statusPath...); jsonEqual(got, statusBefore) {
				t.Errorf("/status did not change %v", tc.statusPath)
			}
			if _, labeled := updated.GetLabels()["s"]; labeled == tc.keepLabels {
				t.Errorf("/status labels %v; kube keeps them on this kind: %v", updated.GetLabels(), tc.keepLabels)
			}

			// The main resource ignores a status it is sent.
			statusAfter, _, _ := unstructured.NestedFieldNoCopy(updated.Object, tc.statusPath...)
			again, err := client.Patch(ctx(t), obj.GetName(), types.MergePatchType, []byte(`{"status":null}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(again.Object, tc.statusPath...); !jsonEqual(got, statusAfter) {
				t.Errorf("main resource changed %v to %v", tc.statusPath, got)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
