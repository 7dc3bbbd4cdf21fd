package admission

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// nodeProblemTolerations are DefaultTolerationSeconds' tolerations.
func nodeProblemTolerations(notReady, unreachable int64) []corev1.Toleration {
	return []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(notReady)},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(unreachable)},
	}
}

// TestDefaultTolerationSeconds: a new pod tolerates node problems for
// 300s, unless it tolerates them already; a pod replaced by its manifest
// gets them back.
func TestDefaultTolerationSeconds(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), podOf("plain", "c"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nodeProblemTolerations(300, 300), got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-kube's +got):\n%s", diff)
	}
	got.Spec.Tolerations = nil
	if got, err = cs.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("replacing the pod without its tolerations: %v", err)
	}
	if diff := cmp.Diff(nodeProblemTolerations(300, 300), got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations after an update (-kube's +got):\n%s", diff)
	}
	all := podOf("tolerant", "c")
	all.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	if got, err = cs.CoreV1().Pods(ns).Create(ctx(t), all, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all.Spec.Tolerations, got.Spec.Tolerations); diff != "" {
		t.Errorf("a pod that tolerates everything (-sent +got):\n%s", diff)
	}
}

// TestStorageObjectInUseProtection: new volumes, claims and volume
// attributes classes get their protection finalizers.
func TestStorageObjectInUseProtection(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx(t), claim("data"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kubernetes.io/pvc-protection"}; !slices.Equal(pvc.Finalizers, want) {
		t.Errorf("claim finalizers %v, want %v", pvc.Finalizers, want)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Create(ctx(t), volume(ns), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().PersistentVolumes().Delete(ctx(t), pv.Name, metav1.DeleteOptions{}) })
	if want := []string{"kubernetes.io/pv-protection"}; !slices.Equal(pv.Finalizers, want) {
		t.Errorf("volume finalizers %v, want %v", pv.Finalizers, want)
	}
	vac, err := cs.StorageV1().VolumeAttributesClasses().Create(ctx(t), &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: ns}, DriverName: "csi.example.com", Parameters: map[string]string{"iops": "100"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kubernetes.io/vac-protection"}; !slices.Equal(vac.Finalizers, want) {
		t.Errorf("class finalizers %v, want %v", vac.Finalizers, want)
	}
}

// TestTaintNodesByCondition: a new node is tainted not-ready, once.
func TestTaintNodesByCondition(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	name := testserver.NamespaceName(t)
	notReady := corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}
	for i, sent := range [][]corev1.Taint{nil, {notReady}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name + string(rune('a'+i))}, Spec: corev1.NodeSpec{Taints: sent}}
		got, err := cs.CoreV1().Nodes().Create(ctx(t), node, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx(t), got.Name, metav1.DeleteOptions{}) })
		if diff := cmp.Diff([]corev1.Taint{notReady}, got.Spec.Taints); diff != "" {
			t.Errorf("taints of a node sent with %v (-kube's +got):\n%s", sent, diff)
		}
	}
}

// zonedNode creates a node of the test's in zone z1 of region r1.
func zonedNode(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", corev1.LabelHostname: name}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx(t), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx(t), name, metav1.DeleteOptions{}) })
	// A list of the latest state waits until the watch cache, which
	// admission reads, has the node.
	if _, err := cs.CoreV1().Nodes().List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// bindPod creates pod name and binds it to node (target kind "Node" when
// kind), returning the bound pod.
func bindPod(t *testing.T, cs kubernetes.Interface, ns, name, node string, kind bool) *corev1.Pod {
	t.Helper()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), podOf(name, "c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name}, Target: corev1.ObjectReference{Name: node}}
	if kind {
		b.Target.Kind = "Node"
	}
	if err := cs.CoreV1().Pods(ns).Bind(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// TestPodTopologyLabels: a pod bound to a node, or created on one, gets
// the node's zone and region labels (not its other labels); a binding
// whose target has no kind does not.
func TestPodTopologyLabels(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	node := testserver.NamespaceName(t)
	zonedNode(t, cs, node)
	topology := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1"}
	if got := bindPod(t, cs, ns, "bound", node, true); !maps.Equal(got.Labels, topology) {
		t.Errorf("bound pod's labels %v, want %v", got.Labels, topology)
	}
	if got := bindPod(t, cs, ns, "kindless", node, false); len(got.Labels) != 0 {
		t.Errorf("a binding without kind: labels %v", got.Labels)
	}
	pod := podOf("placed", "c")
	pod.Spec.NodeName = node
	pod.Labels = map[string]string{corev1.LabelTopologyZone: "mine", "app": "x"}
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{corev1.LabelTopologyZone: "z1", corev1.LabelTopologyRegion: "r1", "app": "x"}; !maps.Equal(got.Labels, want) {
		t.Errorf("a pod created on the node: labels %v, want %v", got.Labels, want)
	}
}

// TestDefaultTolerationSecondsFlags: the flags set the tolerations'
// seconds.
func TestDefaultTolerationSecondsFlags(t *testing.T) {
	if *reference {
		t.Skip("starts a server of its own")
	}
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) {
		o.Admission.NotReadyTolerationSeconds, o.Admission.UnreachableTolerationSeconds = 60, 0
	})
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	got, err := cs.CoreV1().Pods(ts.CreateNamespace(t)).Create(ctx(t), podOf("plain", "c"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(nodeProblemTolerations(60, 0), got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
}

// TestDisabledPlugins: --disable-admission-plugins turns each off: the
// objects are stored as sent and nothing is refused.
func TestDisabledPlugins(t *testing.T) {
	if *reference {
		t.Skip("starts a server of its own")
	}
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) {
		o.Admission.DisablePlugins = []string{"PodSecurity", "DefaultTolerationSeconds", "StorageObjectInUseProtection",
			"TaintNodesByCondition", "DefaultStorageClass", "PodTopologyLabels", "NodeDeclaredFeatureValidator", "PodResizeValidator",
			"DefaultIngressClass", "LimitRanger"}
	})
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testserver.NamespaceName(t),
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(ns.Name).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("PodSecurity off: %v", err)
	}
	if len(pod.Spec.Tolerations) != 0 {
		t.Errorf("DefaultTolerationSeconds off: tolerations %v", pod.Spec.Tolerations)
	}
	defaultClass := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "csi.example.com"}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx(t), defaultClass, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns.Name).Create(ctx(t), claim("data"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pvc.Finalizers) != 0 || pvc.Spec.StorageClassName != nil {
		t.Errorf("StorageObjectInUseProtection, DefaultStorageClass off: finalizers %v, class %v", pvc.Finalizers, pvc.Spec.StorageClassName)
	}
	node, err := cs.CoreV1().Nodes().Create(ctx(t), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(node.Spec.Taints) != 0 {
		t.Errorf("TaintNodesByCondition off: taints %v", node.Spec.Taints)
	}
	zonedNode(t, cs, "zoned")
	if got := bindPod(t, cs, ns.Name, "bound", "zoned", true); len(got.Labels) != 0 {
		t.Errorf("PodTopologyLabels off: labels %v", got.Labels)
	}
	sizedNode(t, cs, "bare")
	if err := resize(t, cs, podLevelPod(t, cs, ns.Name, "resized", "bare", "1"), "3"); err != nil {
		t.Errorf("NodeDeclaredFeatureValidator, PodResizeValidator off: %v", err)
	}
	disabledDefaults(t, cs, ns.Name)
}

// disabledDefaults: with DefaultIngressClass and LimitRanger off, a
// default class and a namespace's default resources are not applied.
func disabledDefaults(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "default",
		Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/ingress"}}
	if _, err := cs.NetworkingV1().IngressClasses().Create(ctx(t), class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}
	if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx(t), limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Lists of the latest state: the watch cache has both, were the
	// plugins on to read them.
	if _, err := cs.NetworkingV1().IngressClasses().List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().LimitRanges(ns).List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: networkingv1.IngressSpec{
		DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}
	got, err := cs.NetworkingV1().Ingresses(ns).Create(ctx(t), ing, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.IngressClassName != nil {
		t.Errorf("DefaultIngressClass off: class %q", *got.Spec.IngressClassName)
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx(t), podOf("unlimited", "c"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := pod.Spec.Containers[0].Resources; len(r.Limits) != 0 || len(r.Requests) != 0 {
		t.Errorf("LimitRanger off: resources %v", r)
	}
}

func claim(name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}}
}

func volume(name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
	}}
}
