package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// sizedNode creates a node of 2 CPUs and 4Gi that declares features.
func sizedNode(t *testing.T, cs kubernetes.Interface, name string, features ...string) {
	t.Helper()
	node, err := cs.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels: map[string]string{corev1.LabelOSStable: "linux"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx(t), name, metav1.DeleteOptions{}) })
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")}
	node.Status.Capacity = node.Status.Allocatable
	node.Status.DeclaredFeatures = features
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx(t), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A list of the latest state waits until the watch cache, which
	// admission reads, has the node.
	if _, err := cs.CoreV1().Nodes().List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podLevelPod is a pod on node with pod-level resources of cpu.
func podLevelPod(t *testing.T, cs kubernetes.Interface, ns, name, node, cpu string) *corev1.Pod {
	t.Helper()
	pod := podOf(name, "c")
	pod.Spec.NodeName = node
	pod.Spec.Resources = &corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
	}
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func resize(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, cpu string) error {
	t.Helper()
	pod = pod.DeepCopy()
	pod.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	_, err := cs.CoreV1().Pods(pod.Namespace).UpdateResize(ctx(t), pod.Name, pod, metav1.UpdateOptions{})
	return err
}

// TestNodeDeclaredFeatureValidator: resizing pod-level resources needs a
// node that declares InPlacePodLevelResourcesVerticalScaling.
func TestNodeDeclaredFeatureValidator(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	bare, declaring := testserver.NamespaceName(t)+"-bare", testserver.NamespaceName(t)+"-declaring"
	sizedNode(t, cs, bare)
	sizedNode(t, cs, declaring, "InPlacePodLevelResourcesVerticalScaling")
	err := resize(t, cs, podLevelPod(t, cs, ns, "on-bare", bare, "100m"), "200m")
	want := `pods "on-bare" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling which are not available on node "` + bare + `"`
	if got := statusOf(t, err); got.Code != 403 || got.Message != want {
		t.Errorf("a resize on a node without the feature: %v\nwant 403 %s", err, want)
	}
	if err := resize(t, cs, podLevelPod(t, cs, ns, "on-declaring", declaring, "100m"), "200m"); err != nil {
		t.Errorf("a resize on a node with the feature: %v", err)
	}
}

// TestPodResizeValidator: a resize beyond the node's allocatable is
// refused, with the cause NodeCapacity.
func TestPodResizeValidator(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	node := testserver.NamespaceName(t)
	sizedNode(t, cs, node, "InPlacePodLevelResourcesVerticalScaling")
	pod := podLevelPod(t, cs, ns, "big", node, "1")
	err := resize(t, cs, pod, "3")
	want := metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `pods "big" is forbidden: node didn't have enough allocatable resources: cpu, requested: 3000, allocatable: 2000`,
		Details: &metav1.StatusDetails{Name: "big", Kind: "pods", Causes: []metav1.StatusCause{{Type: "NodeCapacity"}}}}
	if diff := cmp.Diff(want, statusOf(t, err), ignoreTypeMeta); diff != "" {
		t.Errorf("a resize beyond allocatable (-kube's +got):\n%s", diff)
	}
	if err := resize(t, cs, pod, "2"); err != nil {
		t.Errorf("a resize within allocatable: %v", err)
	}
}
