package admission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestPodSecurityPodUpdate: once a namespace enforces baseline, a
// privileged pod created before may still be updated where the checks
// see no change (its labels), and is refused when an image changes.
func TestPodSecurityPodUpdate(t *testing.T) {
	t.Parallel()
	cs, warnings := warningClient(t)
	name := labelledNamespace(t, cs, nil)
	if _, err := cs.CoreV1().Pods(name).Create(ctx(t), privilegedPod("priv"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(name).List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	setNamespaceLabel(t, cs, name, "pod-security.kubernetes.io/enforce", "baseline")
	want := []string{
		`existing pods in namespace "` + name + `" violate the new PodSecurity enforce level "baseline:latest"`,
		`priv: privileged`,
	}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("the dry run's warnings (-kube's +got):\n%s", diff)
	}

	pod, err := cs.CoreV1().Pods(name).Get(ctx(t), "priv", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"touched": "yes"}
	if pod, err = cs.CoreV1().Pods(name).Update(ctx(t), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a label of a privileged pod at enforce=baseline: %v", err)
	}
	pod.Spec.Containers[0].Image = "busybox:1.36"
	_, err = cs.CoreV1().Pods(name).Update(ctx(t), pod, metav1.UpdateOptions{})
	got := statusOf(t, err)
	wantMessage := `pods "priv" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)`
	if got.Code != 403 || got.Message != wantMessage {
		t.Errorf("an image of a privileged pod at enforce=baseline: %d %s\nwant 403 %s", got.Code, got.Message, wantMessage)
	}
}

// setNamespaceLabel sets one label of a namespace.
func setNamespaceLabel(t *testing.T, cs kubernetes.Interface, name, key, value string) {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[key] = value
	if _, err := cs.CoreV1().Namespaces().Update(ctx(t), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// exemptNamespaceWarning: a label asking an exempt namespace (kube-system
// of ts's configuration) for a level is admitted with a warning that it
// is ignored.
func exemptNamespaceWarning(t *testing.T, name string, cs kubernetes.Interface, warnings *warningRecorder) {
	t.Helper()
	warnings.take()
	setNamespaceLabel(t, cs, name, "pod-security.kubernetes.io/enforce", "restricted")
	want := []string{`namespace "kube-system" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored`}
	if diff := cmp.Diff(want, warnings.take()); diff != "" {
		t.Errorf("warnings (-kube's +got):\n%s", diff)
	}
}
