package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	pdbhelper "k8s.io/component-helpers/apps/poddisruptionbudget"
)

// takeDisruption takes one disruption from the pod's budget: it checks
// that the budget allows one and records the pod in its status, so that
// the disruption controller does not count it while it goes. Conflicts
// with other writers of the budget are retried on a fresh read.
func (r *EvictionREST) takeDisruption(ctx context.Context, pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	refresh := false
	return retryOn(ctx, apierrors.IsConflict, func() error {
		if refresh {
			fresh, err := r.budgets.Get(ctx, pod.Namespace, pdb.Name)
			if err != nil {
				return err
			}
			pdb = fresh
		}
		refresh = true
		return r.checkAndDecrement(ctx, pod.Name, pdb.DeepCopy(), dryRun)
	})
}

// checkAndDecrement writes pdb's status with one disruption fewer, or says
// why the budget allows none, with kube's codes and messages.
func (r *EvictionREST) checkAndDecrement(ctx context.Context, podName string, pdb *policyv1.PodDisruptionBudget, dryRun bool) error {
	s := &pdb.Status
	switch {
	case s.ObservedGeneration < pdb.Generation:
		return tooManyRequests(pdb.Name)
	case s.DisruptionsAllowed < 0:
		return budgetForbids(pdb.Name, "pdb disruptions allowed is negative", "pdb disruptions allowed is negative")
	case len(s.DisruptedPods) > maxDisruptedPods:
		return budgetForbids(pdb.Name, "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
			"too many pending evictions not confirmed by PDB controller")
	case s.DisruptionsAllowed == 0:
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
			Type: policyv1.DisruptionBudgetCause, Message: noDisruptionMessage(pdb),
		})
		return err
	}
	s.DisruptionsAllowed--
	if s.DisruptionsAllowed == 0 {
		pdbhelper.UpdateDisruptionAllowedCondition(pdb)
	}
	if dryRun {
		return nil
	}
	if s.DisruptedPods == nil {
		s.DisruptedPods = map[string]metav1.Time{}
	}
	s.DisruptedPods[podName] = metav1.Time{Time: time.Now()}
	return r.budgets.UpdateStatus(ctx, pdb)
}

// noDisruptionMessage says why a budget allows no disruption: its failed
// sync first (its counts are not to be trusted then), then its counts,
// then what its condition says.
func noDisruptionMessage(pdb *policyv1.PodDisruptionBudget) string {
	s := &pdb.Status
	c := meta.FindStatusCondition(s.Conditions, policyv1.DisruptionAllowedCondition)
	explained := c != nil && c.Status == metav1.ConditionFalse && c.Message != ""
	switch {
	case explained && c.Reason == policyv1.SyncFailedReason:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", pdb.Name, c.Message)
	case s.CurrentHealthy <= s.DesiredHealthy:
		return fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", pdb.Name, s.DesiredHealthy, s.CurrentHealthy)
	case explained:
		return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", pdb.Name, c.Reason, c.Message)
	}
	return fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", pdb.Name)
}

// tooManyRequests is the 429 of a budget its controller has not caught
// up with yet: clients retry after 10 seconds.
func tooManyRequests(pdbName string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: policyv1.DisruptionBudgetCause, Message: fmt.Sprintf("The disruption budget %s is still being processed by the server.", pdbName),
	})
	return err
}

// budgetForbids is the 403 of a budget in a state that allows no eviction.
func budgetForbids(pdbName, reason, detail string) error {
	err := apierrors.NewForbidden(schema.GroupResource{Group: policyv1.GroupName, Resource: "poddisruptionbudget"}, pdbName, errors.New(reason))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    policyv1.DisruptionBudgetCause,
		Message: fmt.Sprintf("The disruption budget %s does not allow evicting pods currently: %s", pdbName, detail),
	})
	return err
}

// markAndDelete gives the pod the DisruptionTarget condition (not on a
// dry run), through pods/status, then deletes it with options. The
// options' preconditions are checked against the pod the condition goes
// on; a resourceVersion precondition then moves to the pod so written.
func (r *EvictionREST) markAndDelete(ctx context.Context, name string, options *metav1.DeleteOptions) error {
	if !isDryRun(options) {
		obj, _, err := r.status.Update(ctx, name, disruptionTarget{options.Preconditions}, nil, nil, false, &metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		if !resourceVersionIsUnset(options) {
			options = options.DeepCopy()
			rv := obj.(*corev1.Pod).ResourceVersion
			options.Preconditions.ResourceVersion = &rv
		}
	}
	_, _, err := r.pods.Delete(ctx, name, nil, options)
	return err
}

// disruptionTarget adds the DisruptionTarget condition to the current pod,
// if it meets preconditions.
type disruptionTarget struct{ preconditions *metav1.Preconditions }

func (disruptionTarget) Preconditions() *metav1.Preconditions { return nil }

func (d disruptionTarget) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	pod := old.(*corev1.Pod).DeepCopy()
	if p := d.preconditions; p != nil {
		// kube names the resource by its kind here.
		gr := schema.GroupResource{Resource: "Pod"}
		if uid := p.UID; uid != nil && *uid != "" && *uid != pod.UID {
			return nil, apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
				"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *uid, pod.UID))
		}
		if rv := p.ResourceVersion; rv != nil && *rv != "" && *rv != pod.ResourceVersion {
			return nil, apierrors.NewConflict(gr, pod.Name, fmt.Errorf(
				"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *rv, pod.ResourceVersion))
		}
	}
	setPodCondition(&pod.Status, corev1.PodCondition{
		Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting",
	})
	return pod, nil
}
