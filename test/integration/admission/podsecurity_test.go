package admission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// restrictedViolations is what kube's library says of a privileged
// container "c" of a pod that sets nothing else, at restricted:latest.
const restrictedViolations = `privileged (container "c" must not set securityContext.privileged=true), ` +
	`allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

// privilegedPod is `kubectl run NAME --image=busybox --privileged`, its
// container named c.
func privilegedPod(name string) *corev1.Pod {
	pod := podOf(name, "c")
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	return pod
}

// labelledNamespace creates a namespace of the test's with labels.
func labelledNamespace(t *testing.T, cs kubernetes.Interface, labels map[string]string) string {
	t.Helper()
	name := testserver.NamespaceName(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(ctx(t), name, metav1.DeleteOptions{}) })
	return name
}

// warningClient is a clientset whose responses' warnings go to the
// returned recorder.
func warningClient(t *testing.T) (kubernetes.Interface, *warningRecorder) {
	warnings := &warningRecorder{}
	cfg := config()
	cfg.WarningHandler = warnings
	return kubernetes.NewForConfigOrDie(cfg), warnings
}

// TestPodSecurityEnforce: a privileged pod in a namespace enforcing
// restricted is refused 403 with kube's message; at baseline a plain pod
// passes and the privileged one is refused for privileged alone.
func TestPodSecurityEnforce(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	restricted := labelledNamespace(t, cs, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	_, err := cs.CoreV1().Pods(restricted).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{})
	want := metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `pods "priv" is forbidden: violates PodSecurity "restricted:latest": ` + restrictedViolations,
		Details: &metav1.StatusDetails{Name: "priv", Kind: "pods"}}
	if diff := cmp.Diff(want, statusOf(t, err), ignoreTypeMeta); diff != "" {
		t.Errorf("a privileged pod at restricted (-kube's +got):\n%s", diff)
	}

	baseline := labelledNamespace(t, cs, map[string]string{"pod-security.kubernetes.io/enforce": "baseline"})
	if _, err := cs.CoreV1().Pods(baseline).Create(ctx(t), podOf("plain", "c"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a plain pod at baseline: %v", err)
	}
	_, err = cs.CoreV1().Pods(baseline).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{})
	if got, want := statusOf(t, err).Message, `pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`; got != want {
		t.Errorf("a privileged pod at baseline:\n got %s\nwant %s", got, want)
	}
	// Dry runs are refused alike; an unlabelled namespace is privileged.
	if _, err := cs.CoreV1().Pods(restricted).Create(ctx(t), privilegedPod("dry"), metav1.CreateOptions{DryRun: []string{"All"}}); statusOf(t, err).Code != 403 {
		t.Errorf("a dry run at restricted: %v", err)
	}
	plain := labelledNamespace(t, cs, nil)
	if _, err := cs.CoreV1().Pods(plain).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a privileged pod in an unlabelled namespace: %v", err)
	}
}

// TestPodSecurityWarn: the warn label gives a Warning header and admits;
// a Deployment whose template violates the enforced level is warned
// about (enforce implies warn), not refused.
func TestPodSecurityWarn(t *testing.T) {
	t.Parallel()
	cs, warnings := warningClient(t)
	warned := labelledNamespace(t, cs, map[string]string{"pod-security.kubernetes.io/warn": "baseline"})
	warnings.take()
	if _, err := cs.CoreV1().Pods(warned).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a privileged pod at warn=baseline: %v", err)
	}
	want := []string{`would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("warnings (-kube's +got):\n%s", diff)
	}

	enforced := labelledNamespace(t, cs, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	warnings.take()
	pod := privilegedPod("")
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "priv"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "priv"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "priv"}}, Spec: pod.Spec},
		},
	}
	if _, err := cs.AppsV1().Deployments(enforced).Create(ctx(t), deploy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a privileged deployment at enforce=restricted: %v", err)
	}
	want = []string{`would violate PodSecurity "restricted:latest": ` + restrictedViolations}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("the deployment's warnings (-kube's +got):\n%s", diff)
	}
}

// TestPodSecurityNamespaceLabels: making a namespace's enforce label
// stricter warns about the pods that violate it (and admits the
// change); an invalid level is refused 422.
func TestPodSecurityNamespaceLabels(t *testing.T) {
	t.Parallel()
	cs, warnings := warningClient(t)
	name := labelledNamespace(t, cs, nil)
	for _, p := range []*corev1.Pod{privilegedPod("priv-a"), privilegedPod("priv-b"), podOf("plain", "c")} {
		if _, err := cs.CoreV1().Pods(name).Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A list of the latest state waits until the watch cache, where the
	// dry run lists pods, has them.
	if _, err := cs.CoreV1().Pods(name).List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
	warnings.take()
	if ns, err = cs.CoreV1().Namespaces().Update(ctx(t), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`existing pods in namespace "` + name + `" violate the new PodSecurity enforce level "baseline:latest"`,
		`priv-a (and 1 other pod): privileged`,
	}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("warnings (-kube's +got):\n%s", diff)
	}

	ns.Labels["pod-security.kubernetes.io/enforce"] = "strict"
	_, err = cs.CoreV1().Namespaces().Update(ctx(t), ns, metav1.UpdateOptions{})
	got := statusOf(t, err)
	wantMessage := `Namespace "` + name + `" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`
	if got.Code != 422 || got.Message != wantMessage {
		t.Errorf("an invalid level: %d %s\nwant 422 %s", got.Code, got.Message, wantMessage)
	}
}

// TestPodSecurityConfiguration: --admission-control-config-file gives
// PodSecurity its defaults (enforce baseline where no label says) and
// exemptions (kube-system, a runtime class, a user).
func TestPodSecurityConfiguration(t *testing.T) {
	if *reference {
		t.Skip("starts a server of its own")
	}
	t.Parallel()
	dir := t.TempDir()
	// The plugin's configuration in a file of its own, named relative
	// to the AdmissionConfiguration's directory.
	writeFile(t, filepath.Join(dir, "podsecurity.yaml"), `apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
exemptions:
  namespaces: [kube-system]
  runtimeClasses: [exempt]
  usernames: [exempt-user]
`)
	writeFile(t, filepath.Join(dir, "admission.yaml"), `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: podsecurity.yaml
`)
	ts := testserver.Start(t, func(o *app.Options) { o.Admission.ConfigFile = filepath.Join(dir, "admission.yaml") })
	cs := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := ts.CreateNamespace(t)
	_, err := cs.CoreV1().Pods(ns).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{})
	if got := statusOf(t, err); got.Code != 403 {
		t.Errorf("a privileged pod where the default is baseline: %v", err)
	}
	if _, err := cs.CoreV1().Pods("kube-system").Create(ctx(t), privilegedPod(testserver.NamespaceName(t)), metav1.CreateOptions{}); err != nil {
		t.Errorf("a privileged pod in exempt kube-system: %v", err)
	}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx(t), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "exempt"}, Handler: "exempt"}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := privilegedPod("runtime")
	pod.Spec.RuntimeClassName = ptr.To("exempt")
	if _, err := cs.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{}); err != nil {
		t.Errorf("a privileged pod of an exempt runtime class: %v", err)
	}
	user := kubernetes.NewForConfigOrDie(ts.ClientConfigFor(t, "exempt-user", "system:masters"))
	if _, err := user.CoreV1().Pods(ns).Create(ctx(t), privilegedPod("user"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a privileged pod of an exempt user: %v", err)
	}

	// A stricter label on an exempt namespace is ignored, with a warning.
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.WarningHandler = warnings
	exemptNamespaceWarning(t, "kube-system", kubernetes.NewForConfigOrDie(cfg), warnings)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
