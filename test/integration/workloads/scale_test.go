package workloads

import (
	"context"
	"net/http"
	"os/exec"
	"strconv"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// scaler is the scale subresource of one kind, through client-go.
type scaler struct {
	testdata string
	resource string // as kubectl names it
	get      func(ctx context.Context, ns, name string) (*autoscalingv1.Scale, error)
	update   func(ctx context.Context, ns string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error)
}

// testScale: GET, PUT and PATCH on /scale read and set spec.replicas (a
// spec change: generation bumps), refuse negative replicas (422 on the
// Scale) and stale resource versions (409), as kubectl scale relies on.
func testScale(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-scale")
	apps, core := e.client.AppsV1(), e.client.CoreV1()
	for _, s := range []scaler{
		{"deployment", "deployment",
			func(c context.Context, ns, n string) (*autoscalingv1.Scale, error) {
				return apps.Deployments(ns).GetScale(c, n, metav1.GetOptions{})
			},
			func(c context.Context, ns string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				return apps.Deployments(ns).UpdateScale(c, s.Name, s, metav1.UpdateOptions{})
			}},
		{"replicaset", "replicaset",
			func(c context.Context, ns, n string) (*autoscalingv1.Scale, error) {
				return apps.ReplicaSets(ns).GetScale(c, n, metav1.GetOptions{})
			},
			func(c context.Context, ns string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				return apps.ReplicaSets(ns).UpdateScale(c, s.Name, s, metav1.UpdateOptions{})
			}},
		{"statefulset", "statefulset",
			func(c context.Context, ns, n string) (*autoscalingv1.Scale, error) {
				return apps.StatefulSets(ns).GetScale(c, n, metav1.GetOptions{})
			},
			func(c context.Context, ns string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				return apps.StatefulSets(ns).UpdateScale(c, s.Name, s, metav1.UpdateOptions{})
			}},
		{"replicationcontroller", "replicationcontroller",
			func(c context.Context, ns, n string) (*autoscalingv1.Scale, error) {
				return core.ReplicationControllers(ns).GetScale(c, n, metav1.GetOptions{})
			},
			func(c context.Context, ns string, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
				return core.ReplicationControllers(ns).UpdateScale(c, s.Name, s, metav1.UpdateOptions{})
			}},
	} {
		t.Run(s.testdata, func(t *testing.T) {
			obj := e.createFromTestdata(t, ns, s.testdata)
			name := obj.GetName()
			scale, err := s.get(ctx(t), ns, name)
			if err != nil {
				t.Fatal(err)
			}
			if scale.Spec.Replicas != 1 || scale.Status.Selector != "app=a" || scale.UID != obj.GetUID() || scale.ResourceVersion != obj.GetResourceVersion() {
				t.Fatalf("scale %+v of %s/%s", scale, obj.GetResourceVersion(), obj.GetUID())
			}

			scale.Spec.Replicas = 3
			scaled, err := s.update(ctx(t), ns, scale)
			if err != nil {
				t.Fatalf("update scale: %v", err)
			}
			if scaled.Spec.Replicas != 3 {
				t.Errorf("scaled to %d, want 3", scaled.Spec.Replicas)
			}
			gvr := kindResources[obj.GetKind()]
			current, err := e.dynamic.Resource(gvr).Namespace(ns).Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r, _, _ := unstructured.NestedInt64(current.Object, "spec", "replicas"); r != 3 || current.GetGeneration() != 2 {
				t.Errorf("after scale: replicas %d generation %d, want 3 and 2", r, current.GetGeneration())
			}

			// The resourceVersion read before the scale is stale now.
			scale.Spec.Replicas = 4
			_, err = s.update(ctx(t), ns, scale)
			if st := statusOf(t, err); st.Code != http.StatusConflict || st.Details.Kind != gvr.Resource {
				t.Errorf("stale scale: %+v", st)
			}

			patched, err := e.dynamic.Resource(gvr).Namespace(ns).Patch(ctx(t), name, types.MergePatchType,
				[]byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale")
			if err != nil {
				t.Fatalf("patch scale: %v", err)
			}
			if patched.GetKind() != "Scale" || patched.GetAPIVersion() != "autoscaling/v1" {
				t.Errorf("patch answered %s %s", patched.GetAPIVersion(), patched.GetKind())
			}
			if r, _, _ := unstructured.NestedInt64(patched.Object, "spec", "replicas"); r != 5 {
				t.Errorf("patched to %d, want 5", r)
			}

			_, err = e.dynamic.Resource(gvr).Namespace(ns).Patch(ctx(t), name, types.MergePatchType,
				[]byte(`{"spec":{"replicas":-1}}`), metav1.PatchOptions{}, "scale")
			st := statusOf(t, err)
			if st.Code != http.StatusUnprocessableEntity || st.Details.Kind != "Scale" || st.Details.Group != "autoscaling" ||
				len(st.Details.Causes) != 1 || st.Details.Causes[0].Field != "spec.replicas" ||
				st.Message != `Scale.autoscaling "`+name+`" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0` {
				t.Errorf("negative replicas: %+v", st)
			}

			if kubectlScale(t, e, ns, s.resource+"/"+name, 2) {
				if scale, err = s.get(ctx(t), ns, name); err != nil || scale.Spec.Replicas != 2 {
					t.Errorf("after kubectl scale: %v %+v, want 2 replicas", err, scale)
				}
			}
		})
	}
}

func kubectlPath() string {
	p, err := exec.LookPath("kubectl")
	if err != nil {
		return ""
	}
	return p
}

// kubectlScale runs kubectl scale against the test server, when kubectl
// is installed, and reports whether it ran.
func kubectlScale(t *testing.T, e *env, ns, target string, replicas int) bool {
	t.Helper()
	kubectl := kubectlPath()
	if kubectl == "" {
		t.Log("kubectl not installed: skipping kubectl scale")
		return false
	}
	out, err := exec.CommandContext(ctx(t), kubectl, "--server", e.srv.URL, "--token", e.srv.Token, "--insecure-skip-tls-verify",
		"-n", ns, "scale", target, "--replicas="+strconv.Itoa(replicas)).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl scale %s: %v: %s", target, err, out)
	}
	return true
}
