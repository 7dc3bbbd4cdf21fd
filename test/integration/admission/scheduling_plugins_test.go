package admission

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// The scheduling plugins' tests run on a server of their own: the
// plugins are opt-in, and their cluster-wide configuration (a default
// node selector, default and whitelisted tolerations) would change every
// other test's pods.

var (
	clusterDefaultToleration = corev1.Toleration{Key: "cluster-default", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	memoryPressure           = corev1.Toleration{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
)

// whitelistedNamespace is the namespace PodNodeSelector's configuration
// gives a whitelist.
const whitelistedNamespace = "scheduling-whitelisted"

const schedulingAdmissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodNodeSelector
  path: podnodeselector.yaml
- name: PodTolerationRestriction
  configuration:
    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
    kind: Configuration
    default:
    - key: cluster-default
      operator: Exists
      effect: NoSchedule
    whitelist:
    - key: cluster-default
      operator: Exists
    - key: node.kubernetes.io/memory-pressure
      operator: Exists
    - operator: Exists
      effect: NoExecute
`

const podNodeSelectorConfig = `podNodeSelectorPluginConfig:
  clusterDefaultNodeSelector: env=test
  ` + whitelistedNamespace + `: env=test,zone=a
`

// startScheduling starts a server running the four scheduling plugins
// with their configuration.
func startScheduling(t *testing.T) kubernetes.Interface {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "admission.yaml"), schedulingAdmissionConfig)
	writeFile(t, filepath.Join(dir, "podnodeselector.yaml"), podNodeSelectorConfig)
	ts := testserver.Start(t, func(o *app.Options) {
		o.Admission.EnablePlugins = []string{"PodNodeSelector", "PodTolerationRestriction",
			"ExtendedResourceToleration", "LimitPodHardAntiAffinityTopology"}
		o.Admission.ConfigFile = filepath.Join(dir, "admission.yaml")
	})
	return kubernetes.NewForConfigOrDie(ts.ClientConfig)
}

// annotatedNamespace creates namespace name (the test's own when "")
// with annotations.
func annotatedNamespace(t *testing.T, cs kubernetes.Interface, name string, annotations map[string]string) string {
	t.Helper()
	if name == "" {
		name = testserver.NamespaceName(t)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// wantRefusal checks that err is kube's Status of code, reason and
// message.
func wantRefusal(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted, want a %d", what, code)
		return
	}
	got := statusOf(t, err)
	if got.Code != code || got.Reason != reason || got.Message != message {
		t.Errorf("%s: got %d %q %q, want %d %q %q", what, got.Code, got.Reason, got.Message, code, reason, message)
	}
}

func selectorPod(name string, selector map[string]string) *corev1.Pod {
	pod := podOf(name, "c")
	pod.Spec.NodeSelector = selector
	return pod
}

// burstable makes pod Burstable (it requests memory).
func burstable(pod *corev1.Pod) *corev1.Pod {
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("10Mi")}
	return pod
}

func TestSchedulingPlugins(t *testing.T) {
	cs := startScheduling(t)
	t.Run("PodNodeSelector", func(t *testing.T) { t.Parallel(); testPodNodeSelector(t, cs) })
	t.Run("PodTolerationRestriction", func(t *testing.T) { t.Parallel(); testPodTolerationRestriction(t, cs) })
	t.Run("PodTolerationRestrictionUpdate", func(t *testing.T) { t.Parallel(); testPodTolerationRestrictionUpdate(t, cs) })
	t.Run("ExtendedResourceToleration", func(t *testing.T) { t.Parallel(); testExtendedResourceToleration(t, cs) })
	t.Run("LimitPodHardAntiAffinityTopology", func(t *testing.T) { t.Parallel(); testAntiAffinityTopology(t, cs) })
}

// testPodNodeSelector: a new pod's selector gets its namespace's, else
// the cluster default; a contradiction and a label outside the
// namespace's whitelist are refused, as kube words it.
func testPodNodeSelector(t *testing.T, cs kubernetes.Interface) {
	plain := annotatedNamespace(t, cs, "", nil)
	got, err := cs.CoreV1().Pods(plain).Create(ctx(t), selectorPod("p", map[string]string{"disk": "ssd"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"env": "test", "disk": "ssd"}, got.Spec.NodeSelector); diff != "" {
		t.Errorf("the cluster default (-want +got):\n%s", diff)
	}

	zoned := annotatedNamespace(t, cs, testserver.NamespaceName(t)+"-zoned", map[string]string{"scheduler.alpha.kubernetes.io/node-selector": "zone=b"})
	if got, err = cs.CoreV1().Pods(zoned).Create(ctx(t), selectorPod("p", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"zone": "b"}, got.Spec.NodeSelector); diff != "" {
		t.Errorf("the namespace's, not the cluster default (-want +got):\n%s", diff)
	}
	_, err = cs.CoreV1().Pods(zoned).Create(ctx(t), selectorPod("other-zone", map[string]string{"zone": "c"}), metav1.CreateOptions{})
	wantRefusal(t, "a contradicting selector", err, 403, metav1.StatusReasonForbidden,
		`pods "other-zone" is forbidden: pod node label selector conflicts with its namespace node label selector`)
	generated := selectorPod("", map[string]string{"zone": "c"})
	generated.GenerateName = "gen-"
	_, err = cs.CoreV1().Pods(zoned).Create(ctx(t), generated, metav1.CreateOptions{})
	wantRefusal(t, "a contradicting selector, generated name", err, 403, metav1.StatusReasonForbidden,
		`pods is forbidden: pod node label selector conflicts with its namespace node label selector`)

	annotatedNamespace(t, cs, whitelistedNamespace, nil)
	_, err = cs.CoreV1().Pods(whitelistedNamespace).Create(ctx(t), selectorPod("ssd", map[string]string{"disk": "ssd"}), metav1.CreateOptions{})
	wantRefusal(t, "a label outside the whitelist", err, 403, metav1.StatusReasonForbidden,
		`pods "ssd" is forbidden: pod node label selector labels conflict with its namespace whitelist`)
	if got, err = cs.CoreV1().Pods(whitelistedNamespace).Create(ctx(t), selectorPod("a", map[string]string{"zone": "a"}), metav1.CreateOptions{}); err != nil {
		t.Errorf("a label of the whitelist: %v", err)
	} else if diff := cmp.Diff(map[string]string{"env": "test", "zone": "a"}, got.Spec.NodeSelector); diff != "" {
		t.Errorf("whitelisted (-want +got):\n%s", diff)
	}

}

// testPodTolerationRestriction: a new pod gets its namespace's default
// tolerations (else the cluster's) after DefaultTolerationSeconds', and
// memory pressure unless BestEffort; tolerations outside the namespace's
// whitelist (else the cluster's) are refused with kube's 500.
func testPodTolerationRestriction(t *testing.T, cs kubernetes.Interface) {
	plain := annotatedNamespace(t, cs, "", nil)
	got, err := cs.CoreV1().Pods(plain).Create(ctx(t), podOf("best-effort", "c"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append(nodeProblemTolerations(300, 300), clusterDefaultToleration)
	if diff := cmp.Diff(want, got.Spec.Tolerations); diff != "" {
		t.Errorf("BestEffort, the cluster's default (-want +got):\n%s", diff)
	}
	if got, err = cs.CoreV1().Pods(plain).Create(ctx(t), burstable(podOf("burstable", "c")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(want, memoryPressure), got.Spec.Tolerations); diff != "" {
		t.Errorf("Burstable (-want +got):\n%s", diff)
	}
	outside := podOf("outside", "c")
	outside.Spec.Tolerations = []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}
	_, err = cs.CoreV1().Pods(plain).Create(ctx(t), outside, metav1.CreateOptions{})
	wantRefusal(t, "outside the cluster's whitelist", err, 500, "",
		"pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist")

	own := annotatedNamespace(t, cs, testserver.NamespaceName(t)+"-own", map[string]string{
		"scheduler.alpha.kubernetes.io/defaultTolerations":   `[{"key":"ns-default","operator":"Exists"}]`,
		"scheduler.alpha.kubernetes.io/tolerationsWhitelist": `[{"key":"ns-default","operator":"Exists"},{"key":"other","operator":"Exists"},{"operator":"Exists","effect":"NoExecute"}]`,
	})
	if got, err = cs.CoreV1().Pods(own).Create(ctx(t), outside.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("within the namespace's whitelist: %v", err)
	}
	want = append([]corev1.Toleration{outside.Spec.Tolerations[0]}, nodeProblemTolerations(300, 300)...)
	want = append(want, corev1.Toleration{Key: "ns-default", Operator: corev1.TolerationOpExists})
	if diff := cmp.Diff(want, got.Spec.Tolerations); diff != "" {
		t.Errorf("the namespace's default (-want +got):\n%s", diff)
	}
	// Burstable: memory pressure, which this whitelist does not cover.
	_, err = cs.CoreV1().Pods(own).Create(ctx(t), burstable(podOf("burstable", "c")), metav1.CreateOptions{})
	wantRefusal(t, "outside the namespace's whitelist", err, 500, "",
		"pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist")

	broken := annotatedNamespace(t, cs, testserver.NamespaceName(t)+"-broken", map[string]string{
		"scheduler.alpha.kubernetes.io/defaultTolerations": "{",
	})
	_, err = cs.CoreV1().Pods(broken).Create(ctx(t), podOf("p", "c"), metav1.CreateOptions{})
	wantRefusal(t, "an annotation that is not JSON", err, 500, "", "unexpected end of JSON input")
}

// testPodTolerationRestrictionUpdate: an updated pod that is not
// BestEffort gets memory pressure back, after DefaultTolerationSeconds'
// tolerations, in kube's order; the whitelist holds on updates.
func testPodTolerationRestrictionUpdate(t *testing.T, cs kubernetes.Interface) {
	ns := annotatedNamespace(t, cs, "", nil)
	pod, err := cs.CoreV1().Pods(ns).Create(ctx(t), burstable(podOf("p", "c")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Spec.Tolerations = []corev1.Toleration{clusterDefaultToleration}
	got, err := cs.CoreV1().Pods(ns).Update(ctx(t), pod, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]corev1.Toleration{clusterDefaultToleration}, nodeProblemTolerations(300, 300)...)
	if diff := cmp.Diff(append(want, memoryPressure), got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations after an update (-kube's +got):\n%s", diff)
	}
	got.Spec.Tolerations = append(got.Spec.Tolerations, corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
	_, err = cs.CoreV1().Pods(ns).Update(ctx(t), got, metav1.UpdateOptions{})
	wantRefusal(t, "an added toleration outside the whitelist", err, 500, "",
		"pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist")
}

// testExtendedResourceToleration: a pod requesting extended resources
// tolerates their NoSchedule taints, in order of name, once; the
// tolerations still answer to the whitelist (checked again after every
// plugin, as kube does).
func testExtendedResourceToleration(t *testing.T, cs kubernetes.Interface) {
	open := annotatedNamespace(t, cs, "", map[string]string{
		"scheduler.alpha.kubernetes.io/defaultTolerations":   "",
		"scheduler.alpha.kubernetes.io/tolerationsWhitelist": "",
	})
	gpu := corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	pod := podOf("devices", "c")
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
	fpga := corev1.ResourceList{"example.com/fpga": resource.MustParse("1")}
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: fpga, Limits: fpga}}}
	toleration := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	}
	pod.Spec.Tolerations = []corev1.Toleration{toleration("example.com/gpu")}
	got, err := cs.CoreV1().Pods(open).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]corev1.Toleration{toleration("example.com/gpu")}, nodeProblemTolerations(300, 300)...)
	want = append(want, toleration("example.com/fpga"))
	if diff := cmp.Diff(want, got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}

	plain := annotatedNamespace(t, cs, testserver.NamespaceName(t)+"-plain", nil)
	pod = podOf("gpu", "c")
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: gpu, Limits: gpu}
	_, err = cs.CoreV1().Pods(plain).Create(ctx(t), pod, metav1.CreateOptions{})
	wantRefusal(t, "an extended resource's toleration outside the cluster's whitelist", err, 500, "",
		"pod tolerations (possibly merged with namespace default tolerations) conflict with its cluster whitelist")
}

// antiAffinityPod is a pod that must not share topologyKey's domain with
// another of its app.
func antiAffinityPod(name, topologyKey string) *corev1.Pod {
	pod := podOf(name, "c")
	pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: topologyKey,
		}},
	}}
	return pod
}

// testAntiAffinityTopology: required anti-affinity by node only; the
// refusal names the generated name (checked after it is generated).
func testAntiAffinityTopology(t *testing.T, cs kubernetes.Interface) {
	ns := annotatedNamespace(t, cs, "", nil)
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), antiAffinityPod("by-node", corev1.LabelHostname), metav1.CreateOptions{}); err != nil {
		t.Errorf("by node: %v", err)
	}
	_, err := cs.CoreV1().Pods(ns).Create(ctx(t), antiAffinityPod("by-zone", corev1.LabelTopologyZone), metav1.CreateOptions{})
	wantRefusal(t, "by zone", err, 403, metav1.StatusReasonForbidden,
		`pods "by-zone" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed`)
	preferred := podOf("preferred", "c")
	preferred.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: antiAffinityPod("", corev1.LabelTopologyZone).Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]}},
	}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), preferred, metav1.CreateOptions{}); err != nil {
		t.Errorf("preferred by zone: %v", err)
	}
	generated := antiAffinityPod("", corev1.LabelTopologyZone)
	generated.GenerateName = "gen-"
	_, err = cs.CoreV1().Pods(ns).Create(ctx(t), generated, metav1.CreateOptions{})
	if err == nil {
		t.Fatal("by zone, generated name: admitted")
	}
	st := statusOf(t, err)
	if re := regexp.MustCompile(`^pods "gen-[a-z0-9]{5}" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed$`); st.Code != 403 || !re.MatchString(st.Message) {
		t.Errorf("by zone, generated name: got %d %q", st.Code, st.Message)
	}
}

// TestSchedulingPluginsOff: kube runs none of them unless enabled.
func TestSchedulingPluginsOff(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := namespace(t)
	got, err := cs.CoreV1().Pods(ns).Create(ctx(t), antiAffinityPod("by-zone", corev1.LabelTopologyZone), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("anti-affinity by zone without LimitPodHardAntiAffinityTopology: %v", err)
	}
	if diff := cmp.Diff(nodeProblemTolerations(300, 300), got.Spec.Tolerations); diff != "" {
		t.Errorf("tolerations without PodTolerationRestriction (-want +got):\n%s", diff)
	}
}

// TestSchedulingPluginsBadConfig: a PodTolerationRestriction
// configuration kube refuses fails the start; that of a plugin not
// enabled is not read.
func TestSchedulingPluginsBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "admission.yaml"), `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodTolerationRestriction
  configuration:
    apiVersion: podtolerationrestriction.admission.k8s.io/v1alpha1
    kind: Configuration
    default:
    - key: foo
      operator: Exists
      value: bar
`)
	_, err := testserver.New(t.TempDir(), func(o *app.Options) {
		o.Admission.EnablePlugins = []string{"PodTolerationRestriction"}
		o.Admission.ConfigFile = filepath.Join(dir, "admission.yaml")
	})
	const want = "invalid config: [podtolerationrestriction.default[0].operator: Invalid value: \"bar\": value must be empty when `operator` is 'Exists']"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("start: got %v, want an error with %q", err, want)
	}
}
