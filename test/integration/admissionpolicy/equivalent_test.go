package admissionpolicy

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// rules matches creates of resources of group/version.
func rules(group, version, resource string) []admissionregistrationv1.NamedRuleWithOperations {
	return []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}},
	}}}
}

// TestEquivalentValidation: a policy naming autoscaling/v2 (matchPolicy
// Equivalent, the default) validates a create at autoscaling/v1 on the
// object converted to v2, as kube converts it: its rule reads the v2
// metrics, which a v1 object does not have.
func TestEquivalentValidation(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(t)
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-hpa"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules:     rules("autoscaling", "v2", "horizontalpodautoscalers"),
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.apiVersion == 'autoscaling/v2' && object.spec.metrics.all(m, m.resource.target.averageUtilization <= 80)",
				Message:    "too hot",
			}},
		},
	}
	install(t, c, p, binding(p.Name, p.Name, admissionregistrationv1.Deny))
	hpa := func(name string, target int32) error {
		_, err := c.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(ctx(t), &autoscalingv1.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To(target),
				ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d"}},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	eventually(t, "the policy", func() error { return deniedWith(hpa("hot", 90), "too hot") })
	if err := hpa("cool", 50); err != nil {
		t.Errorf("a v1 object within the v2 rule: %v", err)
	}
}

// TestEquivalentMutation: a policy naming events.k8s.io/v1 events mutates
// a core v1 event (one stored resource): its apply configuration sets
// the v1 field note, which reaches the core event as its message.
func TestEquivalentMutation(t *testing.T) {
	t.Parallel()
	c := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(t)
	p := mutatingPolicy(ns+"-events", ns, admissionregistrationv1.Fail, admissionregistrationv1.Mutation{
		PatchType:          admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{note: "rewritten at " + object.apiVersion}`},
	})
	p.Spec.MatchConstraints.ResourceRules = rules("events.k8s.io", "v1", "events")
	installMutating(t, c, p)
	var got *corev1.Event
	eventually(t, "the mutation", func() error {
		var err error
		got, err = c.CoreV1().Events(ns).Create(ctx(t), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "e-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", Namespace: ns},
			Reason:         "Tested", Message: "as written", Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "test"},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if got.Message == "as written" {
			return &unexpected{}
		}
		return nil
	})
	if got.Message != "rewritten at events.k8s.io/v1" || got.Reason != "Tested" || got.InvolvedObject.Name != "p" {
		t.Errorf("the core event after the mutation at events.k8s.io/v1: message %q, reason %q, object %v", got.Message, got.Reason, got.InvolvedObject)
	}
}
