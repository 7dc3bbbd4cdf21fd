package policy

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestKubectlDrain drains a node with kubectl, as an administrator does
// before maintenance: it cordons the node and evicts its pods through
// pods/eviction, which the pods' budget first refuses, then allows. A
// fake kubelet finishes the deletion of the evicted pods.
func TestKubectlDrain(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the drain test")
	}
	ns := srv.CreateNamespace(t)
	cs := clientset(t)
	node := "drain-" + ns
	if _, err := cs.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}) })
	runKubelet(t, cs, node)
	for _, name := range []string{"web-1", "web-2"} {
		runningPod(t, cs, ns, name, node, "web")
	}
	pdb := budget(t, cs, ns, "web", 0, 2)

	out, err := drain(t, node, "--timeout=3s")
	if err == nil || !strings.Contains(out, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Errorf("draining against the budget: %v\n%s", err, out)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx(t), node, metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("the node is not cordoned: %v", err)
	}
	if list, err := cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{}); err != nil || len(list.Items) != 2 {
		t.Fatalf("pods after the refused drain: %v %v", list, err)
	}

	pdb.Status.DisruptionsAllowed, pdb.Status.DesiredHealthy = 2, 0
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx(t), pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err = drain(t, node, "--timeout=60s")
	if err != nil || !strings.Contains(out, "node/"+node+" drained") || !strings.Contains(out, "pod/web-1 evicted") {
		t.Fatalf("draining within the budget: %v\n%s", err, out)
	}
	if list, err := cs.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{}); err != nil || len(list.Items) != 0 {
		t.Errorf("pods after the drain: %v %v", list, err)
	}
}

// drain runs kubectl drain on node, its unmanaged pods included.
func drain(t *testing.T, node string, args ...string) (string, error) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append([]string{"--kubeconfig", srv.Server.KubeconfigPath, "drain", node, "--force"}, args...)
	out, err := exec.CommandContext(c, "kubectl", args...).CombinedOutput()
	return string(out), err
}

// runKubelet plays node's kubelet until the test ends: pods being deleted
// there are removed once their containers would have stopped.
func runKubelet(t *testing.T, cs kubernetes.Interface, node string) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	w, err := cs.CoreV1().Pods("").Watch(c, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted || pod.DeletionTimestamp == nil {
				continue
			}
			err := cs.CoreV1().Pods(pod.Namespace).Delete(c, pod.Name, metav1.DeleteOptions{
				GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &pod.UID},
			})
			if err != nil && !apierrors.IsNotFound(err) && c.Err() == nil {
				t.Errorf("kubelet: deleting %s: %v", pod.Name, err)
			}
		}
	}()
}
