package admission

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

// TestAuditAnnotations: webhook calls leave kube's annotations on the
// request's audit event: each mutating webhook called, by round and
// index, and whether it changed the object; its patch only at the Request
// level; the webhooks that failed open; and what a webhook's answer asked
// for, under the webhook's name. The server is the test's own (its audit
// policy audits one namespace at Request, another at Metadata).
func TestAuditAnnotations(t *testing.T) {
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
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx(t), &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "audit-validating"}, Webhooks: []admissionregistrationv1.ValidatingWebhook{check}}, metav1.CreateOptions{}); err != nil {
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
