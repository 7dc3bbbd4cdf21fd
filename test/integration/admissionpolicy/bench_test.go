package admissionpolicy

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// BenchmarkCreateWithPolicy measures dry-run ConfigMap creates through
// HTTP (no etcd write, so that admission's share shows): without a policy,
// with a policy whose rules do not match, and with a matching one (a
// variable, a match condition, two validations, one with a message
// expression, a namespace selector: the namespace object is read).
func BenchmarkCreateWithPolicy(b *testing.B) {
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(b)
	create := func(b *testing.B) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{"app": "x"}}, Data: map[string]string{"a": "b"}}
		opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
		for b.Loop() {
			if _, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, opts); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none", create)
	other := configMapPolicy(ns+"-other", &metav1.LabelSelector{}, admissionregistrationv1.Validation{Expression: "false"})
	other.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"secrets"}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	installFor(b, c, other, func() error {
		_, err := c.CoreV1().Secrets(ns).Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, dryRun)
		return err
	})
	b.Run("not-matching", create)
	p := configMapPolicy(ns+"-match", &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
		admissionregistrationv1.Validation{Expression: "variables.name.size() < 64"},
		admissionregistrationv1.Validation{Expression: "object.data.all(k, k.size() < 10)", MessageExpression: "'bad key in ' + variables.name"})
	p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "name", Expression: "object.metadata.name"}}
	p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "labelled", Expression: "has(object.metadata.labels)"}}
	installFor(b, c, p, func() error {
		long := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("x", 64), Labels: map[string]string{"a": "b"}}}
		_, err := c.CoreV1().ConfigMaps(ns).Create(context.Background(), long, dryRun)
		return err
	})
	b.Run("matching", create)
}

// installFor installs a policy and a Deny binding and waits until they
// are in force: until probe, a request the policy denies, fails.
func installFor(b *testing.B, c kubernetes.Interface, p *admissionregistrationv1.ValidatingAdmissionPolicy, probe func() error) {
	b.Helper()
	api := c.AdmissionregistrationV1()
	bd := binding(p.Name, p.Name, admissionregistrationv1.Deny)
	if _, err := api.ValidatingAdmissionPolicies().Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), p.Name, metav1.DeleteOptions{})
	})
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(context.Background(), bd, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), bd.Name, metav1.DeleteOptions{})
	})
	for i := 0; probe() == nil; i++ {
		if i == 100 {
			b.Fatalf("policy %s is not in force", p.Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
