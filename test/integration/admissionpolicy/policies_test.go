package admissionpolicy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// configMapPolicy is a policy on the configmaps of the namespaces
// nsSelector selects, with validations.
func configMapPolicy(name string, nsSelector *metav1.LabelSelector, validations ...admissionregistrationv1.Validation) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: nsSelector,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			Validations: validations,
		},
	}
}

func binding(name, policy string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy, ValidationActions: actions},
	}
}

// install creates the policy and its binding, deleted when the test ends.
func install(t *testing.T, c kubernetes.Interface, p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	api := c.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.ValidatingAdmissionPolicies().Delete(ctx(t), p.Name, metav1.DeleteOptions{}) })
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.ValidatingAdmissionPolicyBindings().Delete(ctx(t), b.Name, metav1.DeleteOptions{}) })
}

// eventually retries check (a dry-run request) until it reports nil:
// policies take effect when the server's watch delivers them.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for range 100 {
		if err = check(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %v", what, err)
}

func dryRunConfigMap(t *testing.T, c kubernetes.Interface, ns, name string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// deniedWith reports whether err is the policy's denial carrying msg.
func deniedWith(err error, msg string) error {
	if apierrors.IsInvalid(err) && strings.Contains(err.Error(), msg) {
		return nil
	}
	return &unexpected{err}
}

type unexpected struct{ err error }

func (u *unexpected) Error() string { return "unexpected answer: " + errString(u.err) }

func errString(err error) string {
	if err == nil {
		return "admitted"
	}
	return err.Error()
}

// TestNamespaceSelectorAndChanges: a policy applies to the namespaces its
// selector picks; a new generation of it is enforced; without its
// binding it is not.
func TestNamespaceSelectorAndChanges(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	prod, dev := srv.CreateNamespace(t), srv.CreateNamespace(t)
	if _, err := c.CoreV1().Namespaces().Patch(ctx(t), prod, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"tier-`+prod+`":"prod"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	name := prod + "-names"
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"tier-" + prod: "prod"}}
	install(t, c, configMapPolicy(name, sel, admissionregistrationv1.Validation{Expression: "object.metadata.name.startsWith('prod-')", Message: "prod names"}),
		binding(name, name, admissionregistrationv1.Deny))
	eventually(t, "the policy denies in the selected namespace", func() error { return deniedWith(dryRunConfigMap(t, c, prod, "x"), "prod names") })
	if err := dryRunConfigMap(t, c, prod, "prod-x"); err != nil {
		t.Errorf("a valid name: %v", err)
	}
	if err := dryRunConfigMap(t, c, dev, "x"); err != nil {
		t.Errorf("another namespace: %v", err)
	}

	api := c.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	p, err := api.Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Validations[0].Message = "prod names, second generation"
	if _, err := api.Update(ctx(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new generation is enforced", func() error { return deniedWith(dryRunConfigMap(t, c, prod, "x"), "second generation") })

	if err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "unbound, the policy admits", func() error { return dryRunConfigMap(t, c, prod, "x") })
}

// warnings collects the warnings client-go receives.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) has(text string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.list {
		if s == text {
			return true
		}
	}
	return false
}

// TestWarnAndAudit: the Warn action reaches client-go as a warning, the
// Audit action and the policy's audit annotations reach the audit log.
func TestWarnAndAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policyFile, log := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policyFile, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := testserver.Start(t, func(o *app.Options) { o.Audit.PolicyFile, o.Audit.Path = policyFile, log })
	w := &warnings{}
	cfg := rest.CopyConfig(ts.ClientConfig)
	cfg.WarningHandler = w
	c := kubernetes.NewForConfigOrDie(cfg)
	ns := ts.CreateNamespace(t)
	p := configMapPolicy("audited", &metav1.LabelSelector{},
		admissionregistrationv1.Validation{Expression: "!has(object.data)", Message: "no data please"})
	p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "size", ValueExpression: "string(size(object.data))"}}
	install(t, c, p, binding("audited", "audited", admissionregistrationv1.Warn, admissionregistrationv1.Audit))
	const warning = "Validation failed for ValidatingAdmissionPolicy 'audited' with binding 'audited': no data please"
	eventually(t, "the warning", func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}, Data: map[string]string{"a": "b"}}
		if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return err
		}
		if !w.has(warning) {
			return &unexpected{}
		}
		return nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audited"}, Data: map[string]string{"a": "b", "c": "d"}}
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("Warn and Audit admit: %v", err)
	}
	var event auditv1.Event
	for i := 0; event.AuditID == ""; i++ {
		if i == 200 {
			t.Fatal("no audit event of the create")
		}
		time.Sleep(50 * time.Millisecond)
		data, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(data), "\n") {
			var e auditv1.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Name == "audited" &&
				e.ObjectRef.Resource == "configmaps" && e.Stage == auditv1.StageResponseComplete {
				event = e
			}
		}
	}
	if got := event.Annotations["audited/size"]; got != "2" {
		t.Errorf("audit annotation audited/size = %q, want 2 (all: %v)", got, event.Annotations)
	}
	var failures []struct {
		Message           string   `json:"message"`
		Policy            string   `json:"policy"`
		Binding           string   `json:"binding"`
		ExpressionIndex   int      `json:"expressionIndex"`
		ValidationActions []string `json:"validationActions"`
	}
	if err := json.Unmarshal([]byte(event.Annotations["validation.policy.admission.k8s.io/validation_failure"]), &failures); err != nil {
		t.Fatalf("validation_failure annotation: %v (all: %v)", err, event.Annotations)
	}
	if len(failures) != 1 || failures[0].Message != "no data please" || failures[0].Policy != "audited" || failures[0].Binding != "audited" ||
		strings.Join(failures[0].ValidationActions, ",") != "Warn,Audit" {
		t.Errorf("validation failures: %+v", failures)
	}
}
