package core

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// heldPod creates, in namespace, a pod that a finalizer keeps after its
// deletion (as kube's e2e "namespace deletion should delete pod first"
// does), and a config map beside it.
func heldPod(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"e2e.example.com/finalizer"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}
	if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// releasePod removes the finalizer heldPod set.
func releasePod(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Helper()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := client.CoreV1().Pods(namespace).Patch(context.Background(), "held", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitNamespaceGone waits until the namespace is deleted.
func waitNamespaceGone(t *testing.T, client kubernetes.Interface, namespace string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := client.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s is still there (%v)", namespace, err)
		}
	}
}

// TestNamespaceDeletionDeletesPodsFirst: as kube's OrderedNamespaceDeletion,
// the namespace controller deletes the pods of a Terminating namespace and
// nothing else until they are gone; then the rest, then the namespace.
func TestNamespaceDeletionDeletesPodsFirst(t *testing.T) {
	t.Parallel()
	client := clientset(t)
	ctx := context.Background()
	ns := namespace(t)
	heldPod(t, client, ns)

	// The controller retries every second: a few rounds without the pod
	// gone must leave the config map alone.
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		pod, err := client.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the held pod: %v", err)
		}
		if _, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
			t.Fatalf("the config map went before the pod (deletionTimestamp %v): %v", pod.DeletionTimestamp, err)
		}
	}
	pod, err := client.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
	if err != nil || pod.DeletionTimestamp == nil {
		t.Fatalf("the pod is not being deleted: %v %v", err, pod)
	}
	releasePod(t, client, ns)
	waitNamespaceGone(t, client, ns)
}

// TestNamespaceStatusUpdateKeepsTerminatingNamespace: a status update of a
// Terminating namespace whose spec.finalizers remain (kube's namespace
// controller writes its conditions so) keeps the namespace, as kube's
// ShouldDeleteNamespaceDuringUpdate does; /finalize emptying them
// deletes it.
func TestNamespaceStatusUpdateKeepsTerminatingNamespace(t *testing.T) {
	t.Parallel()
	client := clientset(t)
	ctx := context.Background()
	name := namespace(t)
	heldPod(t, client, name)

	// The namespace controller writes its conditions meanwhile: each
	// write here is retried on a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ns, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		ns.Status.Conditions = append(ns.Status.Conditions, corev1.NamespaceCondition{
			Type: "example.com/Checked", Status: corev1.ConditionTrue,
			Reason: "Checked", Message: "a status update of a Terminating namespace", LastTransitionTime: metav1.Now(),
		})
		_, err = client.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the namespace went away on a status update: %v", err)
	}
	if len(got.Spec.Finalizers) == 0 || got.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("namespace %+v, want Terminating with its finalizer", got)
	}
	if _, err := client.CoreV1().Pods(name).Get(ctx, "held", metav1.GetOptions{}); err != nil {
		t.Fatalf("the held pod: %v", err)
	}

	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got.Spec.Finalizers = nil
		_, err = client.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after /finalize emptied spec.finalizers: %v, want NotFound", err)
	}
	// The held pod stays behind, as in kube: with its namespace gone,
	// PodSecurity (as kube's plugin) fails every update of it (500, "failed
	// to lookup namespace").
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err = client.CoreV1().Pods(name).Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsInternalError(err) {
		t.Errorf("updating a pod whose namespace is gone: %v, want kube's internal error", err)
	}
}
