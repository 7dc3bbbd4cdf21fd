package policy

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	policyv1ac "k8s.io/client-go/applyconfigurations/policy/v1"
	"k8s.io/utils/ptr"
)

// TestBudgetApplyAndUpdate applies a budget server-side, changes it as
// another client would (an update must name its resourceVersion), and
// checks that only spec changes move the generation.
func TestBudgetApplyAndUpdate(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	pdbs := clientset(t).PolicyV1().PodDisruptionBudgets(ns)
	cfg := policyv1ac.PodDisruptionBudget("api", ns).WithSpec(policyv1ac.PodDisruptionBudgetSpec().
		WithMaxUnavailable(intstr.FromString("20%")).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "api"})))
	pdb, err := pdbs.Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: "gitops"})
	if err != nil {
		t.Fatal(err)
	}
	if pdb.Generation != 1 || len(pdb.ManagedFields) != 1 || pdb.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("applied: generation %d, managed fields %+v", pdb.Generation, pdb.ManagedFields)
	}

	unconditional := pdb.DeepCopy()
	unconditional.ResourceVersion = ""
	_, err = pdbs.Update(ctx(t), unconditional, metav1.UpdateOptions{})
	if s := statusOf(t, err); s.Code != http.StatusUnprocessableEntity || !strings.Contains(s.Message, "metadata.resourceVersion: Invalid value: 0: must be specified for an update") {
		t.Errorf("update without resourceVersion: %d %s", s.Code, s.Message)
	}
	pdb.Labels = map[string]string{"team": "a"}
	if pdb, err = pdbs.Update(ctx(t), pdb, metav1.UpdateOptions{}); err != nil || pdb.Generation != 1 {
		t.Fatalf("labels: generation %d, %v", pdb.Generation, err)
	}
	pdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	if pdb, err = pdbs.Update(ctx(t), pdb, metav1.UpdateOptions{}); err != nil || pdb.Generation != 2 {
		t.Fatalf("spec: generation %d, %v", pdb.Generation, err)
	}
	_, err = pdbs.Apply(ctx(t), cfg, metav1.ApplyOptions{FieldManager: "gitops"})
	if s := statusOf(t, err); s.Code != http.StatusConflict || !strings.Contains(s.Message, ".spec.maxUnavailable") {
		t.Errorf("re-applying over another manager's change: %d %s", s.Code, s.Message)
	}
	list, err := pdbs.List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=api"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("list: %v %v", list, err)
	}
}
