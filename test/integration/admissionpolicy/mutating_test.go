package admissionpolicy

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// mutatingPolicy is a policy on the configmaps of namespace ns with one
// mutation.
func mutatingPolicy(name, ns string, failure admissionregistrationv1.FailurePolicyType, m admissionregistrationv1.Mutation) *admissionregistrationv1.MutatingAdmissionPolicy {
	return &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			FailurePolicy:      &failure,
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations:          []admissionregistrationv1.Mutation{m},
		},
	}
}

func installMutating(t *testing.T, c kubernetes.Interface, p *admissionregistrationv1.MutatingAdmissionPolicy) {
	t.Helper()
	api := c.AdmissionregistrationV1()
	if _, err := api.MutatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.MutatingAdmissionPolicies().Delete(ctx(t), p.Name, metav1.DeleteOptions{}) })
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: p.Name}}
	if _, err := api.MutatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.MutatingAdmissionPolicyBindings().Delete(ctx(t), b.Name, metav1.DeleteOptions{}) })
}

// TestMutation: an apply configuration sets a label on what client-go
// creates, and the stored object has it; a mutation failing at runtime is
// ignored under failurePolicy Ignore.
func TestMutation(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(t)
	installMutating(t, c, mutatingPolicy(ns+"-owner", ns, admissionregistrationv1.Fail, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
			Expression: `Object{metadata: Object.metadata{labels: {"owner": request.userInfo.username}}}`,
		},
	}))
	installMutating(t, c, mutatingPolicy(ns+"-broken", ns, admissionregistrationv1.Ignore, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "replace", path: "/spec/missing", value: "x"}]`},
	}))
	var got *corev1.ConfigMap
	eventually(t, "the mutation", func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}
		var err error
		if got, err = c.CoreV1().ConfigMaps(ns).Create(ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			return err
		}
		if got.Labels["owner"] == "" {
			return &unexpected{}
		}
		return nil
	})
	created, err := c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mutated"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := c.CoreV1().ConfigMaps(ns).Get(ctx(t), "mutated", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range []*corev1.ConfigMap{created, stored} {
		if owner := cm.Labels["owner"]; owner != got.Labels["owner"] {
			t.Errorf("label owner = %q, want the user's name %q", owner, got.Labels["owner"])
		}
	}
}
