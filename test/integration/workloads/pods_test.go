package workloads

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

// testBinding: pods/binding (and the older bindings resource) assign an
// unassigned pod to a node once, and answer 201 with a Status.
func testBinding(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-binding")
	pods := e.client.CoreV1().Pods(ns)
	for _, name := range []string{"a", "b", "gated"} {
		p := newPod(name)
		if name == "gated" {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
		}
		if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Annotations: map[string]string{"bound-by": "test"}, Labels: map[string]string{"zone": "z1"}},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "node-1"},
	}
	if err := pods.Bind(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	pod, err := pods.Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node-1" || pod.Annotations["bound-by"] != "test" || pod.Labels["zone"] != "z1" || pod.Generation != 1 {
		t.Errorf("bound pod: node %q annotations %v labels %v generation %d", pod.Spec.NodeName, pod.Annotations, pod.Labels, pod.Generation)
	}
	if len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Type != corev1.PodScheduled || pod.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("conditions after binding: %+v", pod.Status.Conditions)
	}

	// The raw answer is kube's: 201 and a Status with the code.
	code, body := e.do(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/bindings", "application/json",
		[]byte(`{"metadata":{"name":"b"},"target":{"name":"node-2"}}`))
	if code != http.StatusCreated || string(body) != `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`+"\n" {
		t.Errorf("bindings: %d %s", code, body)
	}
	if pod, err := pods.Get(ctx(t), "b", metav1.GetOptions{}); err != nil || pod.Spec.NodeName != "node-2" {
		t.Errorf("pod b after bindings: %v %q", err, pod.Spec.NodeName)
	}

	for _, tc := range []struct {
		name, pod string
		want      int32
		message   string
	}{
		{"already bound", "a", http.StatusConflict, `Operation cannot be fulfilled on pods/binding "a": pod a is already assigned to node "node-1"`},
		{"gated", "gated", http.StatusConflict, `Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates`},
		{"missing pod", "nope", http.StatusNotFound, `pods "nope" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := pods.Bind(ctx(t), bindingTo(tc.pod, "node-3"), metav1.CreateOptions{})
			if st := statusOf(t, err); st.Code != tc.want || st.Message != tc.message {
				t.Errorf("got %d %q, want %d %q", st.Code, st.Message, tc.want, tc.message)
			}
		})
	}
}

// testPodGracefulDeletion: an unscheduled pod goes at once; a scheduled
// one gets a deletionTimestamp and its grace period, and stays until
// deleted with grace 0 (what a kubelet does); a finished pod goes at once.
func testPodGracefulDeletion(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-graceful")
	pods := e.client.CoreV1().Pods(ns)
	create := func(name, node string, phase corev1.PodPhase) {
		t.Helper()
		p := newPod(name)
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45)
		if _, err := pods.Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if node != "" {
			if err := pods.Bind(ctx(t), bindingTo(name, node), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if phase != "" {
			cur, err := pods.Get(ctx(t), name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cur.Status.Phase = phase
			if _, err := pods.UpdateStatus(ctx(t), cur, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone := func(name string) bool {
		_, err := pods.Get(ctx(t), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}

	create("unscheduled", "", "")
	if err := pods.Delete(ctx(t), "unscheduled", metav1.DeleteOptions{}); err != nil || !gone("unscheduled") {
		t.Errorf("unscheduled pod: %v, gone %v", err, gone("unscheduled"))
	}
	create("finished", "node-1", corev1.PodSucceeded)
	if err := pods.Delete(ctx(t), "finished", metav1.DeleteOptions{}); err != nil || !gone("finished") {
		t.Errorf("finished pod: %v, gone %v", err, gone("finished"))
	}

	create("running", "node-1", corev1.PodRunning)
	before := time.Now()
	if err := pods.Delete(ctx(t), "running", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := pods.Get(ctx(t), "running", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a scheduled pod stays while it terminates: %v", err)
	}
	if g := pod.DeletionGracePeriodSeconds; g == nil || *g != 45 {
		t.Errorf("deletionGracePeriodSeconds %v, want 45", g)
	}
	if ts := pod.DeletionTimestamp; ts == nil || ts.Time.Before(before.Add(44*time.Second)) {
		t.Errorf("deletionTimestamp %v, want 45s after the delete", ts)
	}
	if pod.Generation != 2 {
		t.Errorf("generation %d after graceful delete, want 2", pod.Generation)
	}
	// A shorter grace period is honoured, a longer one is not.
	if err := pods.Delete(ctx(t), "running", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); err != nil {
		t.Fatal(err)
	}
	if pod, err = pods.Get(ctx(t), "running", metav1.GetOptions{}); err != nil || *pod.DeletionGracePeriodSeconds != 45 {
		t.Errorf("after a longer grace period: %v %v", err, pod.DeletionGracePeriodSeconds)
	}
	if err := pods.Delete(ctx(t), "running", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil || !gone("running") {
		t.Errorf("delete with grace 0: %v, gone %v", err, gone("running"))
	}

	// The delete answers with the pod (kube returns deleted pods).
	create("answer", "", "")
	code, body := e.do(t, http.MethodDelete, "/api/v1/namespaces/"+ns+"/pods/answer", "", nil)
	if code != http.StatusOK || !strings.Contains(string(body), `"kind":"Pod"`) {
		t.Errorf("delete answer: %d %s", code, body)
	}
}

// testPodFieldSelectors: pods can be selected by node (the field the
// watch cache indexes), phase and the other fields kube allows; unknown
// fields are a 400.
func testPodFieldSelectors(t *testing.T, e *env) {
	ns := e.namespace(t, "wl-fields")
	pods := e.client.CoreV1().Pods(ns)
	for _, p := range []struct{ name, node string }{{"a", "node-1"}, {"b", "node-1"}, {"c", "node-2"}, {"d", ""}} {
		if _, err := pods.Create(ctx(t), newPod(p.name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if p.node != "" {
			if err := pods.Bind(ctx(t), bindingTo(p.name, p.node), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	running, err := pods.Get(ctx(t), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	running.Status.Phase, running.Status.PodIP = corev1.PodRunning, "10.1.2.3"
	if _, err := pods.UpdateStatus(ctx(t), running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		selector string
		want     []string
	}{
		{"spec.nodeName=node-1", []string{"a", "b"}},
		{"spec.nodeName=", []string{"d"}},
		{"spec.host=node-2", []string{"c"}},
		{"status.phase=Pending", []string{"a", "b", "d"}},
		{"status.phase!=Pending", []string{"c"}},
		{"status.podIP=10.1.2.3", []string{"c"}},
		{"spec.nodeName=node-1,metadata.name=b", []string{"b"}},
		{"spec.serviceAccountName=default,spec.restartPolicy=Always,spec.schedulerName=default-scheduler,spec.hostNetwork=false", []string{"a", "b", "c", "d"}},
		{"status.nominatedNodeName=x", nil},
		{"status.podIPs=10.1.2.3", nil},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			list, err := pods.List(ctx(t), metav1.ListOptions{FieldSelector: tc.selector})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range list.Items {
				got = append(got, p.Name)
			}
			sort.Strings(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("watch by node", func(t *testing.T) {
		// JSON: the watch handler refuses the protobuf client-go asks for
		// first (the apiserver's to fix).
		cfg := rest.CopyConfig(e.srv.ClientConfig)
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
		w, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods(ns).Watch(ctx(t), metav1.ListOptions{FieldSelector: "spec.nodeName=node-2"})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		select {
		case ev := <-w.ResultChan():
			if p, ok := ev.Object.(*corev1.Pod); !ok || p.Name != "c" {
				t.Errorf("first event: %v %v", ev.Type, ev.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
	})
	for _, tc := range []struct{ resource, selector, message string }{
		{"pods", "spec.foo=x", "field label not supported: spec.foo"},
		{"replicationcontrollers", "spec.replicas=1", "field label not supported: spec.replicas"},
		{"podtemplates", "spec.foo=x", `"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"`},
	} {
		t.Run("unknown "+tc.resource, func(t *testing.T) {
			err := e.client.CoreV1().RESTClient().Get().Namespace(ns).Resource(tc.resource).Param("fieldSelector", tc.selector).Do(ctx(t)).Error()
			if st := statusOf(t, err); st.Code != http.StatusBadRequest || st.Message != tc.message {
				t.Errorf("got %d %q, want 400 %q", st.Code, st.Message, tc.message)
			}
		})
	}
}

func bindingTo(pod, node string) *corev1.Binding {
	return &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Name: node}}
}
