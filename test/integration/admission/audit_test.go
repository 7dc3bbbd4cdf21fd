package admission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestAuditAnnotationsAndMetrics: webhook calls leave kube's annotations
// on the request's audit event: each mutating webhook called, by round
// and index, and whether it changed the object; its patch only at the
// Request level; the webhooks that failed open; and what a webhook's
// answer asked for, under the webhook's name. They are counted in kube's
// admission webhook metrics. The server is the test's own (its audit
// policy audits one namespace at Request, another at Metadata).
func TestAuditAnnotationsAndMetrics(t *testing.T) {
	if *reference {
		t.Skip("needs a server started with the test's audit policy")
	}
	t.Parallel()
	const atRequest, atMetadata = "audit-request", "audit-metadata"
	dir := t.TempDir()
	policy, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	rules := "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n" +
		"- level: Request\n  namespaces: [" + atRequest + "]\n" +
		"- level: Metadata\n  namespaces: [" + atMetadata + "]\n"
	if err := os.WriteFile(policy, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path = policy, log })
	c := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	for _, ns := range []string{atRequest, atMetadata} {
		if _, err := c.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := startWebhookServer(t)
	both := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{atRequest, atMetadata}}}}
	dead := admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/dead")}
	configMaps := rule("", "v1", []string{"configmaps"}, admissionregistrationv1.Create)
	failOpen := mutating("dead.mutating.test", w, "", "", configMaps)
	failOpen.ClientConfig, failOpen.NamespaceSelector = dead, both
	failOpen.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	label := mutating("label.mutating.test", w, "/auditlabel", "", configMaps)
	label.NamespaceSelector = both
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx(t), &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-mutating"}, Webhooks: []admissionregistrationv1.MutatingWebhook{failOpen, label}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	check := validating("dead.validating.test", w, "", "", configMaps)
	check.ClientConfig, check.NamespaceSelector = dead, both
	check.FailurePolicy = ptr.To(admissionregistrationv1.Ignore)
	deny := validating("deny.validating.test", w, "/deny", "", rule("", "v1", []string{"configmaps"}, admissionregistrationv1.Delete))
	deny.NamespaceSelector = both
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-validating"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{check, deny}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func(int) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}
		got, err := c.CoreV1().ConfigMaps(atMetadata).Create(ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && got.Labels["audited"] != "yes" {
			return errors.New("the mutating webhook is not called yet")
		}
		return err
	})
	for _, ns := range []string{atRequest, atMetadata} {
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	want := map[string]string{
		"mutation.webhook.admission.k8s.io/round_0_index_0":               `{"configuration":"audit-mutating","webhook":"dead.mutating.test","mutated":false}`,
		"failed-open.mutation.webhook.admission.k8s.io/round_0_index_0":   "dead.mutating.test",
		"mutation.webhook.admission.k8s.io/round_0_index_1":               `{"configuration":"audit-mutating","webhook":"label.mutating.test","mutated":true}`,
		"label.mutating.test/reason":                                      "labelled",
		"failed-open.validating.webhook.admission.k8s.io/round_0_index_0": "dead.validating.test",
	}
	const patchKey = "patch.webhook.admission.k8s.io/round_0_index_1"
	const patch = `{"configuration":"audit-mutating","webhook":"label.mutating.test","patch":[{"op":"add","path":"/metadata/labels","value":{"audited":"yes"}}],"patchType":"JSONPatch"}`
	for _, ns := range []string{atRequest, atMetadata} {
		got := createEvent(t, log, ns).Annotations
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: annotation %s = %q, want %q", ns, k, got[k], v)
			}
		}
		if wantPatch := map[string]string{atRequest: patch, atMetadata: ""}[ns]; got[patchKey] != wantPatch {
			t.Errorf("%s (audited at %s): annotation %s = %q, want %q", ns, map[string]string{atRequest: "Request", atMetadata: "Metadata"}[ns], patchKey, got[patchKey], wantPatch)
		}
	}

	if err := c.CoreV1().ConfigMaps(atRequest).Delete(ctx(t), "audited", metav1.DeleteOptions{}); err == nil {
		t.Fatal("the delete was not refused by deny.validating.test")
	}
	data, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	// The dry runs that waited for the configuration called the webhooks
	// too: those counts are at least the two creates'.
	for series, least := range map[string]float64{
		`apiserver_admission_webhook_request_total{code="200",name="label.mutating.test",operation="CREATE",rejected="false",type="admit"}`:         2,
		`apiserver_admission_webhook_request_total{code="503",name="dead.mutating.test",operation="CREATE",rejected="false",type="admit"}`:          2,
		`apiserver_admission_webhook_fail_open_count{name="dead.mutating.test",type="admit"}`:                                                       2,
		`apiserver_admission_webhook_fail_open_count{name="dead.validating.test",type="validating"}`:                                                2,
		`apiserver_admission_webhook_admission_duration_seconds_count{name="label.mutating.test",operation="CREATE",rejected="false",type="admit"}`: 2,
	} {
		if got := sample(t, data, series); got < least {
			t.Errorf("%s = %v, want at least %v", series, got, least)
		}
	}
	for series, want := range map[string]float64{
		`apiserver_admission_webhook_rejection_count{error_type="no_error",name="deny.validating.test",operation="DELETE",rejection_code="403",type="validating"}`: 1,
		`apiserver_admission_webhook_request_total{code="403",name="deny.validating.test",operation="DELETE",rejected="true",type="validating"}`:                   1,
	} {
		if got := sample(t, data, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

// sample is the value of series in a Prometheus text exposition.
func sample(t *testing.T, exposition []byte, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(exposition), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Errorf("no sample of %s", series)
	return 0
}

// createEvent returns the audit event of the create of ConfigMap
// ns/audited, once the log has it.
func createEvent(t *testing.T, log, ns string) auditv1.Event {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		data, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(data), "\n") {
			var e auditv1.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Verb == "create" && e.Stage == auditv1.StageResponseComplete &&
				e.ObjectRef != nil && e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Namespace == ns && e.ObjectRef.Name == "audited" {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit event of the create of %s/audited", ns)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
