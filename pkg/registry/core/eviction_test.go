package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordedBudgets is a DisruptionBudgets that records status writes.
type recordedBudgets struct {
	written []*policyv1.PodDisruptionBudget
}

func (b *recordedBudgets) List(context.Context, string) ([]policyv1.PodDisruptionBudget, error) {
	return nil, nil
}

func (b *recordedBudgets) Get(context.Context, string, string) (*policyv1.PodDisruptionBudget, error) {
	return nil, fmt.Errorf("not read in this test")
}

func (b *recordedBudgets) UpdateStatus(_ context.Context, pdb *policyv1.PodDisruptionBudget) error {
	b.written = append(b.written, pdb)
	return nil
}

// TestCheckAndDecrement covers what a budget's status may say, some of
// which the API refuses to store (a negative allowance) and the
// disruption controller alone would write.
func TestCheckAndDecrement(t *testing.T) {
	manyDisrupted := map[string]metav1.Time{}
	for i := range maxDisruptedPods + 1 {
		manyDisrupted[fmt.Sprint(i)] = metav1.Now()
	}
	for _, tc := range []struct {
		name     string
		status   policyv1.PodDisruptionBudgetStatus
		dryRun   bool
		code     int32
		cause    string
		writes   int
		allowed  int32
		disabled bool // the DisruptionAllowed condition turned False
	}{
		{name: "not observed yet", status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 3}, code: http.StatusTooManyRequests,
			cause: "The disruption budget b is still being processed by the server."},
		{name: "negative", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: -1}, code: http.StatusForbidden,
			cause: "The disruption budget b does not allow evicting pods currently: pdb disruptions allowed is negative"},
		{name: "too many unconfirmed", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1, DisruptedPods: manyDisrupted},
			code: http.StatusForbidden, cause: "The disruption budget b does not allow evicting pods currently: too many pending evictions not confirmed by PDB controller"},
		{name: "none allowed, counts above", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 2},
			code: http.StatusTooManyRequests, cause: "The disruption budget b does not allow evicting pods currently"},
		{name: "dry run", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1}, dryRun: true},
		{name: "the last one", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 1}, writes: 1, disabled: true},
		{name: "one of several", status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: 2}, writes: 1, allowed: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budgets := &recordedBudgets{}
			r := &EvictionREST{budgets: budgets}
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Generation: 1}, Status: tc.status}
			err := r.checkAndDecrement(context.Background(), "p", pdb, tc.dryRun)
			if tc.code != 0 {
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.ErrStatus.Code != tc.code ||
					len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Message != tc.cause {
					t.Fatalf("got %v, want %d %q", err, tc.code, tc.cause)
				}
				return
			}
			if err != nil || len(budgets.written) != tc.writes {
				t.Fatalf("%v, %d writes", err, len(budgets.written))
			}
			if tc.writes == 0 {
				return
			}
			s := budgets.written[0].Status
			_, recorded := s.DisruptedPods["p"]
			disabled := len(s.Conditions) == 1 && s.Conditions[0].Status == metav1.ConditionFalse && s.Conditions[0].Reason == policyv1.InsufficientPodsReason
			if s.DisruptionsAllowed != tc.allowed || !recorded || disabled != tc.disabled {
				t.Errorf("written status %+v", s)
			}
		})
	}
}
