package policy

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// runningPod creates a pod on node, running and ready, labelled app.
func runningPod(t *testing.T, cs kubernetes.Interface, ns, name, node, app string) *corev1.Pod {
	t.Helper()
	pod, err := cs.CoreV1().Pods(ns).Create(ctx(t), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if pod, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pod
}

// budget creates a PodDisruptionBudget over app, its status as the
// disruption controller would write it: allowed disruptions of healthy.
func budget(t *testing.T, cs kubernetes.Interface, ns, app string, allowed, healthy int32) *policyv1.PodDisruptionBudget {
	t.Helper()
	pdbs := cs.PolicyV1().PodDisruptionBudgets(ns)
	pdb, err := pdbs.Create(ctx(t), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(healthy - allowed)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: healthy, DesiredHealthy: healthy - allowed, ExpectedPods: healthy}
	if pdb, err = pdbs.UpdateStatus(ctx(t), pdb, metav1.UpdateOptions{FieldManager: "kube-controller-manager"}); err != nil {
		t.Fatal(err)
	}
	return pdb
}

func eviction(name string) *policyv1.Eviction {
	return &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestEvictionHonoursBudget evicts through client-go's EvictV1 and
// EvictV1beta1 (as kubectl drain does): refused with 429 while the budget
// allows nothing, allowed once, the budget then counting the disruption.
func TestEvictionHonoursBudget(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	cs := clientset(t)
	pods := cs.CoreV1().Pods(ns)
	runningPod(t, cs, ns, "a", "node-a", "web")
	runningPod(t, cs, ns, "b", "node-a", "web")
	pdb := budget(t, cs, ns, "web", 0, 2)

	err := pods.EvictV1(ctx(t), eviction("a"))
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting with no disruption allowed: %v", err)
	}
	s := statusOf(t, err)
	if s.Message != "Cannot evict pod as it would violate the pod's disruption budget." || len(s.Details.Causes) != 1 ||
		s.Details.Causes[0].Type != policyv1.DisruptionBudgetCause || s.Details.Causes[0].Message != "The disruption budget web needs 2 healthy pods and has 2 currently" {
		t.Errorf("429: %+v", s)
	}

	pdb.Status.DisruptionsAllowed, pdb.Status.DesiredHealthy = 1, 1
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx(t), pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1beta1(ctx(t), &policyv1beta1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatalf("evicting through policy/v1beta1: %v", err)
	}
	pod, err := pods.Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.DeletionTimestamp == nil || !hasCondition(pod, corev1.DisruptionTarget, "EvictionByEvictionAPI") {
		t.Errorf("evicted pod: deletion %v, conditions %+v", pod.DeletionTimestamp, pod.Status.Conditions)
	}
	pdb, err = cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, recorded := pdb.Status.DisruptedPods["a"]; pdb.Status.DisruptionsAllowed != 0 || !recorded {
		t.Errorf("budget after the eviction: %+v", pdb.Status)
	}
	if !managedBy(pdb.ManagedFields, "kube-apiserver", "status") {
		t.Errorf("the eviction's write of the budget has no managed fields entry: %+v", pdb.ManagedFields)
	}
	if err := pods.EvictV1(ctx(t), eviction("b")); !apierrors.IsTooManyRequests(err) {
		t.Errorf("evicting a second pod: %v", err)
	}
}

// TestConcurrentEvictions: two evictions race for a budget's only
// disruption; the eviction that loses the race on the budget's status
// retries on a fresh read, and is refused.
func TestConcurrentEvictions(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	cs := clientset(t)
	for _, name := range []string{"a", "b"} {
		runningPod(t, cs, ns, name, "node-a", "db")
	}
	budget(t, cs, ns, "db", 1, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cs.CoreV1().Pods(ns).EvictV1(context.Background(), eviction(name))
		}()
	}
	wg.Wait()
	evicted, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			evicted++
		case apierrors.IsTooManyRequests(err):
			refused++
		default:
			t.Errorf("eviction: %v", err)
		}
	}
	if evicted != 1 || refused != 1 {
		t.Errorf("%d evicted, %d refused (%v), want 1 and 1", evicted, refused, errs)
	}
}

// TestEvictionPreconditions: the client's preconditions apply to the pod.
func TestEvictionPreconditions(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	cs := clientset(t)
	pod := runningPod(t, cs, ns, "p", "node-a", "api")
	stale := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To("1")}}}
	err := cs.CoreV1().Pods(ns).EvictV1(ctx(t), stale)
	if s := statusOf(t, err); s.Code != http.StatusConflict || !strings.HasPrefix(s.Message,
		`Operation cannot be fulfilled on Pod "p": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record`) {
		t.Errorf("stale resourceVersion: %d %s", s.Code, s.Message)
	}
	current := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "p"},
		DeleteOptions: &metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{ResourceVersion: &pod.ResourceVersion}}}
	if err := cs.CoreV1().Pods(ns).EvictV1(ctx(t), current); err != nil {
		t.Fatalf("current resourceVersion: %v", err)
	}
	if _, err := cs.CoreV1().Pods(ns).Get(ctx(t), "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod evicted with no grace period: %v", err)
	}
}

func managedBy(entries []metav1.ManagedFieldsEntry, manager, subresource string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.Subresource == subresource && e.Operation == metav1.ManagedFieldsOperationUpdate {
			return true
		}
	}
	return false
}

func hasCondition(pod *corev1.Pod, t corev1.PodConditionType, reason string) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue && c.Reason == reason
		}
	}
	return false
}
