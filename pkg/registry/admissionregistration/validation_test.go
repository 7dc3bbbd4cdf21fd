package admissionregistration

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestValidateResources(t *testing.T) {
	for _, tc := range []struct {
		resources []string
		want      string // the errors, joined; "" for none
	}{
		{[]string{"pods", "pods/status"}, ""},
		{[]string{"*", "*/status"}, ""},
		{[]string{"*/*"}, ""},
		{[]string{"*/*", "pods"}, "if '*/*' is present"},
		{[]string{"*", "pods"}, "if '*' is present"},
		// kube looks at the last plain resource only.
		{[]string{"pods", "*"}, ""},
		{[]string{"pods/*", "pods/log"}, "if 'pods/*' is present, must not specify pods/log"},
		{[]string{"*/scale", "deployments/scale"}, "if '*/scale' is present"},
		{[]string{}, "Required value"},
		{[]string{""}, "Required value"},
	} {
		var got []string
		for _, e := range validateResources(tc.resources, field.NewPath("resources")) {
			got = append(got, e.Error())
		}
		if all := strings.Join(got, "; "); (tc.want == "") != (all == "") || !strings.Contains(all, tc.want) {
			t.Errorf("%q: %q, want %q", tc.resources, all, tc.want)
		}
	}
}

func TestIsCELIdentifier(t *testing.T) {
	for name, want := range map[string]bool{"replicas": true, "_x1": true, "1x": false, "in": false, "namespace": false, "a-b": false, "": false} {
		if got := isCELIdentifier(name); got != want {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
}

// TestStoredExpressions: an expression stored before keeps compiling in
// kube's stored environment, which knows every library version; a new
// one compiles in the environment of this version. Both reject what is
// not CEL.
func TestStoredExpressions(t *testing.T) {
	conditions := []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "object.metadata.name == 'x'"}}
	if errs := validateMatchConditions(conditions, nil, false, field.NewPath("mc")); len(errs) != 0 {
		t.Errorf("new: %v", errs)
	}
	if errs := validateMatchConditions(conditions, sets.New(conditions[0].Expression), false, field.NewPath("mc")); len(errs) != 0 {
		t.Errorf("stored: %v", errs)
	}
	bad := []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "object.metadata.name =="}}
	if errs := validateMatchConditions(bad, sets.New(bad[0].Expression), false, field.NewPath("mc")); len(errs) != 1 || !strings.Contains(errs[0].Error(), "Syntax error") {
		t.Errorf("stored syntax error: %v", errs)
	}
}

// BenchmarkValidatePolicy measures the validation of a policy with a
// match condition, two variables and a validation with a message
// expression: mostly CEL compilation (a composited compiler per policy,
// as kube builds one).
func BenchmarkValidatePolicy(b *testing.B) {
	rule := admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{"CREATE"},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
	}}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule}},
		MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "users", Expression: "!request.userInfo.username.startsWith('system:')"}},
		Variables: []admissionregistrationv1.Variable{
			{Name: "replicas", Expression: "object.spec.replicas"}, {Name: "limit", Expression: "5"},
		},
		Validations: []admissionregistrationv1.Validation{{Expression: "variables.replicas <= variables.limit", MessageExpression: "'too many: ' + string(variables.replicas)"}},
	}}
	p.Name = "bench"
	defaultMatchResources(p.Spec.MatchConstraints)
	p.Spec.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	if errs := validateValidatingPolicy(p, nil); len(errs) != 0 {
		b.Fatal(errs)
	}
	b.ReportAllocs()
	for b.Loop() {
		validateValidatingPolicy(p, nil)
	}
}
