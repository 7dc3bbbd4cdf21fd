package admission

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var configMaps = []string{"configmaps"}

// namespace creates a namespace of the test's own.
func namespace(t testing.TB) string {
	t.Helper()
	name := testserver.NamespaceName(t)
	if *reference {
		name = fmt.Sprintf("%s-%d", strings.TrimRight(name[:min(len(name), 50)], "-"), time.Now().UnixNano()%1e6)
	}
	if _, err := clientset(t).CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = clientset(t).CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func configMap(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
}

func registerValidating(t testing.TB, hooks ...admissionregistrationv1.ValidatingWebhook) {
	t.Helper()
	name := testserver.NamespaceName(t)
	c := clientset(t).AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := c.Create(ctx(t), &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func registerMutating(t testing.TB, hooks ...admissionregistrationv1.MutatingWebhook) {
	t.Helper()
	name := testserver.NamespaceName(t)
	c := clientset(t).AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := c.Create(ctx(t), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}, Webhooks: hooks}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// eventually retries f (a configuration is seen through a watch, soon
// but not at once) until it reports nil, for at most 15 seconds.
func eventually(t testing.TB, f func(attempt int) error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		err := f(i)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// statusOf is the Status of a client-go error.
func statusOf(t testing.TB, err error) metav1.Status {
	t.Helper()
	var status apierrors.APIStatus
	if se, ok := err.(apierrors.APIStatus); ok {
		status = se
	} else {
		t.Fatalf("not a Status error: %v", err)
	}
	return status.Status()
}

// TestValidatingDenies: a validating webhook's refusal is kube's Status:
// the webhook's code and message, prefixed with its name; what it does
// not match (another operation, another namespace) passes; the review
// names the operation, the object and the options.
func TestValidatingDenies(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns, other := namespace(t), namespace(t)
	registerValidating(t, validating("deny.admission.test", w, "/deny", ns, rule("", "v1", configMaps, admissionregistrationv1.Create)))
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	var denied error
	eventually(t, func(i int) error {
		_, denied = cms.Create(ctx(t), configMap(fmt.Sprintf("c%d", i), nil), metav1.CreateOptions{})
		if denied == nil {
			return fmt.Errorf("the webhook never refused")
		}
		return nil
	})
	status := statusOf(t, denied)
	want := `admission webhook "deny.admission.test" denied the request: widgets are not welcome here`
	if status.Code != http.StatusForbidden || status.Message != want || status.Status != metav1.StatusFailure {
		t.Errorf("refusal: %+v", status)
	}
	reviews := w.calls("/deny")
	req := reviews[len(reviews)-1].Request
	if req.Operation != "CREATE" || req.Namespace != ns || req.Kind.Kind != "ConfigMap" || req.Resource.Resource != "configmaps" ||
		!strings.Contains(string(req.Object.Raw), `"kind":"ConfigMap"`) || !strings.Contains(string(req.Options.Raw), `"kind":"CreateOptions"`) ||
		req.UserInfo.Username == "" {
		t.Errorf("review: %+v\nobject %s\noptions %s", req, req.Object.Raw, req.Options.Raw)
	}
	if q := w.query("/deny"); q != "timeout=10s" {
		t.Errorf("the webhook was told %q, not kube's timeout=10s", q)
	}
	if _, err := clientset(t).CoreV1().ConfigMaps(other).Create(ctx(t), configMap("c", nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("another namespace: %v", err)
	}
	if _, err := clientset(t).CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("another resource: %v", err)
	}
}

// TestMutatingPatches: mutating webhooks patch the object in order, the
// result is what is stored (and validated: a validating webhook sees it);
// one that changes the object has the earlier IfNeeded ones called again;
// warnings reach the client.
func TestMutatingPatches(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	first := mutating("first.admission.test", w, "/warn", ns, rule("", "v1", configMaps, admissionregistrationv1.Create, admissionregistrationv1.Update))
	first.ReinvocationPolicy = ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy)
	second := mutating("second.admission.test", w, "/mutate", ns, rule("", "v1", configMaps, admissionregistrationv1.Create, admissionregistrationv1.Update))
	registerMutating(t, first, second)
	registerValidating(t, validating("see.admission.test", w, "/allow", ns, rule("", "v1", configMaps, admissionregistrationv1.Create)))
	warnings := &warningRecorder{}
	cfg := config()
	cfg.WarningHandler = warnings
	cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(ns)
	var cm *corev1.ConfigMap
	eventually(t, func(i int) error {
		var err error
		cm, err = cms.Create(ctx(t), configMap(fmt.Sprintf("c%d", i), map[string]string{"app": "x"}), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if cm.Labels["mutated"] == "" || len(w.calls("/allow")) == 0 {
			return fmt.Errorf("not mutated yet: %v", cm.Labels)
		}
		return nil
	})
	stored, err := cms.Get(ctx(t), cm.Name, metav1.GetOptions{})
	if err != nil || stored.Labels["mutated"] != cm.Labels["mutated"] || stored.Labels["app"] != "x" {
		t.Errorf("stored: %v %v", stored, err)
	}
	validated := w.calls("/allow")
	if last := validated[len(validated)-1].Request; !strings.Contains(string(last.Object.Raw), `"mutated":"`) {
		t.Errorf("the validating webhook saw %s", last.Object.Raw)
	}
	if got := warnings.take(); !contains(got, "first warning") || !contains(got, "second warning") {
		t.Errorf("warnings: %q", got)
	}
	// The second round: /warn (IfNeeded) is called again after /mutate
	// changed the object; /mutate is not.
	before := len(w.calls("/warn"))
	beforeMutate := len(w.calls("/mutate"))
	if _, err := cms.Create(ctx(t), configMap("again", map[string]string{"app": "x"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := len(w.calls("/warn")) - before; got != 2 {
		t.Errorf("the IfNeeded webhook was called %d times, want 2", got)
	}
	if got := len(w.calls("/mutate")) - beforeMutate; got != 1 {
		t.Errorf("the other webhook was called %d times, want 1", got)
	}
	// An update is patched too, and the webhook sees the old object.
	stored.Data["k"] = "changed"
	updated, err := cms.Update(ctx(t), stored, metav1.UpdateOptions{})
	if err != nil || updated.Labels["mutated"] == stored.Labels["mutated"] {
		t.Errorf("update: %v %v", updated, err)
	}
	reviews := w.calls("/mutate")
	if last := reviews[len(reviews)-1].Request; last.Operation != "UPDATE" || len(last.OldObject.Raw) == 0 {
		t.Errorf("the update's review: %+v", last)
	}
}

type warningRecorder struct {
	mu   sync.Mutex
	list []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

var _ rest.WarningHandler = &warningRecorder{}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSelectors: objectSelector (on the new or the old object) and
// matchConditions (CEL) decide which requests a webhook sees.
func TestSelectors(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	byLabel := validating("label.admission.test", w, "/deny", ns, rule("", "v1", configMaps, admissionregistrationv1.Create, admissionregistrationv1.Delete))
	byLabel.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"guarded": "yes"}}
	byName := validating("name.admission.test", w, "/deny", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	byName.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "deny-prefix", Expression: `object.metadata.name.startsWith("deny-")`}}
	registerValidating(t, byLabel, byName)
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	eventually(t, func(i int) error {
		_, err := cms.Create(ctx(t), configMap(fmt.Sprintf("deny-%d", i), nil), metav1.CreateOptions{})
		if err == nil {
			return fmt.Errorf("the matchCondition never matched")
		}
		if !strings.Contains(err.Error(), `"name.admission.test"`) {
			t.Fatalf("refused by another: %v", err)
		}
		return nil
	})
	if _, err := cms.Create(ctx(t), configMap("plain", nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("neither matches: %v", err)
	}
	_, err := cms.Create(ctx(t), configMap("labelled", map[string]string{"guarded": "yes"}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `"label.admission.test"`) {
		t.Errorf("the object selector: %v", err)
	}
	// A delete is matched on the old object's labels.
	if _, err := cms.Patch(ctx(t), "plain", "application/merge-patch+json", []byte(`{"metadata":{"labels":{"guarded":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = cms.Delete(ctx(t), "plain", metav1.DeleteOptions{})
	if err == nil || !strings.Contains(err.Error(), `"label.admission.test"`) {
		t.Errorf("a delete of a selected object: %v", err)
	}
	reviews := w.calls("/deny")
	if last := reviews[len(reviews)-1].Request; last.Operation != "DELETE" || len(last.OldObject.Raw) == 0 || len(last.Object.Raw) != 0 {
		t.Errorf("the delete's review: %+v", last)
	}
}

// deadURL is an https URL where nothing listens.
func deadURL(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "https://" + addr + "/dead"
}

// TestFailurePolicies: a webhook that cannot be called, times out or
// answers nonsense fails the request under Fail (500, kube's words) and
// is passed over under Ignore.
func TestFailurePolicies(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	dead := validating("dead.admission.test", w, "/dead", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	dead.ClientConfig.URL = ptr.To(deadURL(t))
	dead.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "dead"}}
	slow := validating("slow.admission.test", w, "/slow", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	slow.TimeoutSeconds = ptr.To[int32](1)
	slow.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "slow"}}
	garbage := validating("garbage.admission.test", w, "/garbage", ns, rule("", "v1", configMaps, admissionregistrationv1.Create))
	garbage.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "garbage"}}
	var ignored []admissionregistrationv1.ValidatingWebhook
	for _, h := range []admissionregistrationv1.ValidatingWebhook{dead, slow, garbage} {
		i := h
		i.Name = "ignore-" + h.Name
		i.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
		i.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"case": "ignore-" + h.ObjectSelector.MatchLabels["case"]}}
		ignored = append(ignored, i)
	}
	registerValidating(t, append([]admissionregistrationv1.ValidatingWebhook{dead, slow, garbage}, ignored...)...)
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	var err error
	eventually(t, func(i int) error {
		_, err = cms.Create(ctx(t), configMap(fmt.Sprintf("dead-%d", i), map[string]string{"case": "dead"}), metav1.CreateOptions{})
		if err == nil {
			return fmt.Errorf("the dead webhook never failed a request")
		}
		return nil
	})
	prefix := `Internal error occurred: failed calling webhook "dead.admission.test": failed to call webhook: Post "` + *dead.ClientConfig.URL + `?timeout=10s": `
	if s := statusOf(t, err); s.Code != http.StatusInternalServerError || s.Reason != metav1.StatusReasonInternalError || !strings.HasPrefix(s.Message, prefix) {
		t.Errorf("a dead webhook: %+v", s)
	}
	_, err = cms.Create(ctx(t), configMap("slow", map[string]string{"case": "slow"}), metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusInternalServerError || !strings.HasPrefix(s.Message, `Internal error occurred: failed calling webhook "slow.admission.test": failed to call webhook: Post "`) ||
		!strings.Contains(s.Message, "?timeout=1s") || !strings.Contains(s.Message, "context deadline exceeded") {
		t.Errorf("a slow webhook: %+v", s)
	}
	_, err = cms.Create(ctx(t), configMap("garbage", map[string]string{"case": "garbage"}), metav1.CreateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusInternalServerError ||
		s.Message != `Internal error occurred: failed calling webhook "garbage.admission.test": received invalid webhook response: expected response.uid="`+w.lastUID("/garbage")+`", got "wrong"` {
		t.Errorf("a webhook answering nonsense: %+v", s)
	}
	for _, c := range []string{"dead", "slow", "garbage"} {
		if _, err := cms.Create(ctx(t), configMap("ignore-"+c, map[string]string{"case": "ignore-" + c}), metav1.CreateOptions{}); err != nil {
			t.Errorf("failurePolicy Ignore, %s: %v", c, err)
		}
	}
}

func (w *webhookServer) lastUID(path string) string {
	reviews := w.calls(path)
	if len(reviews) == 0 {
		return ""
	}
	return string(reviews[len(reviews)-1].Request.UID)
}

// TestDryRun: a dry run reaches webhooks that declare no side effects,
// saying it is one, and stores nothing even when they patch.
func TestDryRun(t *testing.T) {
	t.Parallel()
	w := startWebhookServer(t)
	ns := namespace(t)
	registerMutating(t, mutating("patch.admission.test", w, "/mutate", ns, rule("", "v1", configMaps, admissionregistrationv1.Create)))
	cms := clientset(t).CoreV1().ConfigMaps(ns)
	eventually(t, func(i int) error {
		cm, err := cms.Create(ctx(t), configMap(fmt.Sprintf("c%d", i), map[string]string{"app": "x"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if cm.Labels["mutated"] == "" {
			return fmt.Errorf("not mutated yet")
		}
		return nil
	})
	reviews := w.calls("/mutate")
	if last := reviews[len(reviews)-1].Request; last.DryRun == nil || !*last.DryRun {
		t.Errorf("the review of a dry run: %+v", last)
	}
	list, err := cms.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Name != "kube-root-ca.crt" {
			t.Errorf("a dry run stored %s", cm.Name)
		}
	}
}
