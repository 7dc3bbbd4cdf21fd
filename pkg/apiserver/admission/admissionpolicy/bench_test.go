package admissionpolicy

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// namespaces answers the namespace reads of the benchmark from memory
// (the server reads them from its watch cache).
type namespaces struct{ ns *corev1.Namespace }

func (n namespaces) Get(context.Context, string, *metav1.GetOptions) (runtime.Object, error) {
	return n.ns, nil
}

// BenchmarkValidate measures the admission step alone on a ConfigMap
// create: no policy, a policy on another resource, and a matching policy
// (a variable, a match condition, two validations, one with a message
// expression, a namespace selector).
func BenchmarkValidate(b *testing.B) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{"kubernetes.io/metadata.name": "bench"}}}
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	resources := NewResources([]Resource{{Resource: cmGVR, Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespaced: true}})
	v := NewValidating(Config{Namespaces: namespaces{ns}, Resources: resources})
	close(v.source.synced)
	attrs := handlers.Attributes{Operation: handlers.Create, Resource: cmGVR, Namespace: "bench", Name: "bench",
		Kind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Options: &metav1.CreateOptions{}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "bench", Labels: map[string]string{"app": "x"}}, Data: map[string]string{"a": "b"}}
	run := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Validate(context.Background(), attrs, cm); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("none", run)

	rule := func(resource string) *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "bench"}},
			ObjectSelector:    &metav1.LabelSelector{},
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}},
			}}},
		}
	}
	add := func(name string, spec admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		v.source.mu.Lock()
		defer v.source.mu.Unlock()
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("p-" + name)}, Spec: spec}
		bd := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID("b-" + name)},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}
		v.source.putLocked(policies, p, nil)
		v.source.putLocked(bindings, bd, nil)
		v.source.rebuildLocked()
	}
	add("other", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rule("secrets"),
		Validations: []admissionregistrationv1.Validation{{Expression: "false"}}})
	b.Run("not-matching", run)
	add("match", admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: rule("configmaps"),
		Variables:       []admissionregistrationv1.Variable{{Name: "name", Expression: "object.metadata.name"}},
		MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "labelled", Expression: "has(object.metadata.labels)"}},
		Validations: []admissionregistrationv1.Validation{{Expression: "variables.name.size() < 64"},
			{Expression: "object.data.all(k, k.size() < 10)", MessageExpression: "'bad key in ' + variables.name"}}})
	b.Run("matching", run)
}

// BenchmarkAdmit measures the mutating step alone on a ConfigMap create
// with a policy whose apply configuration sets a label (merged with the
// served kinds' type converter), and with a JSON patch.
func BenchmarkAdmit(b *testing.B) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	resources := NewResources([]Resource{{Resource: cmGVR, Kind: cmGVK, Namespaced: true}})
	attrs := handlers.Attributes{Operation: handlers.Create, Resource: cmGVR, Namespace: "bench", Name: "bench", Kind: cmGVK,
		Options: &metav1.CreateOptions{}}
	for _, m := range []admissionregistrationv1.Mutation{{
		PatchType:          admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}`},
	}, {
		PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{Expression: `[JSONPatch{op: "add", path: "/data/added", value: "yes"}]`},
	}} {
		b.Run(string(m.PatchType), func(b *testing.B) {
			mu := NewMutating(Config{Namespaces: namespaces{ns}, Resources: resources})
			close(mu.source.synced)
			p := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "p"},
				Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
					MatchConstraints: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
						ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
						}}}},
					ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
					Mutations:          []admissionregistrationv1.Mutation{m},
				}}
			bd := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "b"},
				Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}
			mu.source.mu.Lock()
			mu.source.putLocked(policies, p, nil)
			mu.source.putLocked(bindings, bd, nil)
			mu.source.rebuildLocked()
			mu.source.mu.Unlock()
			b.ReportAllocs()
			for b.Loop() {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "bench"}, Data: map[string]string{"a": "b"}}
				if err := mu.Admit(context.Background(), attrs, cm); err != nil {
					b.Fatal(err)
				}
				if cm.Labels["mutated"] != "yes" && cm.Data["added"] != "yes" {
					b.Fatal("not mutated")
				}
			}
		})
	}
}
