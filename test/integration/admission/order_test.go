package admission

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOrder: kube's order of admission. Mutating webhooks see a pod as
// the built-in plugins left it (LimitRanger's defaults, the service
// account); what they patch is validated as the client's own object;
// validating webhooks see only objects that passed validation.
func TestOrder(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	cs := clientset(t)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	limits := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}}}}
	if _, err := cs.CoreV1().LimitRanges(ns).Create(ctx(t), limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	invalid := mutating("invalid.admission.test", w, "/invalid", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	invalid.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "invalid"}}
	registerMutating(t, mutating("pods.admission.test", w, "/mutate", ns, rule("", "v1", []string{"pods"}, admissionregistrationv1.Create)), invalid)
	deny := validating("deny.admission.test", w, "/deny", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	deny.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "deny"}}
	registerValidating(t, deny)

	pods := cs.CoreV1().Pods(ns)
	var pod *corev1.Pod
	eventually(t, func(i int) error {
		var err error
		pod, err = pods.Create(ctx(t), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if pod.Labels["mutated"] == "" {
			return fmt.Errorf("not mutated yet")
		}
		return nil
	})
	reviews := w.calls("/mutate")
	seen := string(reviews[len(reviews)-1].Request.Object.Raw)
	if !strings.Contains(seen, `"serviceAccountName":"default"`) || !strings.Contains(seen, `"limits":{"cpu":"300m"}`) {
		t.Errorf("the mutating webhook saw the pod before the built-in plugins changed it: %s", seen)
	}

	cms := cs.CoreV1().ConfigMaps(ns)
	_, err := cms.Create(ctx(t), configMap("patched-invalid", map[string]string{"case": "invalid"}), metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusUnprocessableEntity || !strings.Contains(s.Message, `metadata.labels: Invalid value: "-bad-"`) {
		t.Errorf("an invalid patch: %+v", s)
	}
	calls := len(w.calls("/deny"))
	bad := configMap("invalid", map[string]string{"case": "deny"})
	bad.Data = map[string]string{"not a key": "v"}
	_, err = cms.Create(ctx(t), bad, metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusUnprocessableEntity {
		t.Errorf("an invalid object: %+v", s)
	}
	if got := len(w.calls("/deny")); got != calls {
		t.Errorf("the validating webhook saw an invalid object")
	}
	// Mutating webhooks see deletes too, with no object to patch.
	registerMutating(t, func() admissionregistrationv1.MutatingWebhook {
		h := mutating("delete.admission.test", w, "/mutate", ns, rule("", "v1", configMaps, admissionregistrationv1.Delete))
		h.Name = "delete.admission.test"
		return h
	}())
	if _, err := cms.Create(ctx(t), configMap("doomed", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func(int) error {
		err := cms.Delete(ctx(t), "doomed", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return fmt.Errorf("the delete webhook was not called yet")
		}
		want := `Internal error occurred: admission webhook "delete.admission.test" attempted to modify the object, which is not supported for this operation`
		if s := statusOf(t, err); s.Code != http.StatusInternalServerError || s.Message != want {
			t.Fatalf("a patch on a delete: %+v", s)
		}
		return nil
	})
}
