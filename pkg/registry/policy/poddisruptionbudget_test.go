package policy

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestStripV1beta1Label(t *testing.T) {
	exists := metav1.LabelSelectorRequirement{Key: v1beta1Label, Operator: metav1.LabelSelectorOpExists}
	mine := metav1.LabelSelectorRequirement{Key: "app", Operator: metav1.LabelSelectorOpExists}
	alone := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{exists}}
	stripV1beta1Label(alone)
	if len(alone.MatchExpressions) != 1 {
		t.Errorf("kube's match-none selector changed: %v", alone)
	}
	mixed := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{exists, mine}}
	stripV1beta1Label(mixed)
	if len(mixed.MatchExpressions) != 1 || mixed.MatchExpressions[0].Key != mine.Key {
		t.Errorf("mixed selector: %v", mixed)
	}
	stripV1beta1Label(nil)
}

func TestValidatePDBSpec(t *testing.T) {
	spec := &policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromString("10%"))}
	errs := validatePDBSpec(spec, false, field.NewPath("spec"))
	if len(errs) != 1 || errs[0].Error() !=
		`spec: Invalid value: {"MinAvailable":1,"Selector":null,"MaxUnavailable":"10%","UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set` {
		t.Errorf("errors %v", errs)
	}
	oldSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"bad value!"}}}}
	spec = &policyv1.PodDisruptionBudgetSpec{Selector: oldSelector}
	if errs := validatePDBSpec(spec, true, field.NewPath("spec")); len(errs) != 0 {
		t.Errorf("an invalid label value kept from the old selector: %v", errs)
	}
	if errs := validatePDBSpec(spec, false, field.NewPath("spec")); len(errs) != 1 {
		t.Errorf("an invalid label value: %v", errs)
	}
}
