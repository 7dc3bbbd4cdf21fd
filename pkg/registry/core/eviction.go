package core

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// DisruptionBudgets are the PodDisruptionBudgets evictions honour: the
// policy group's, which kube's eviction reaches through its loopback
// client (policy.Budgets).
type DisruptionBudgets interface {
	// List returns the budgets of namespace ns, read consistently.
	List(ctx context.Context, ns string) ([]policyv1.PodDisruptionBudget, error)
	// Get reads one budget.
	Get(ctx context.Context, ns, name string) (*policyv1.PodDisruptionBudget, error)
	// UpdateStatus writes pdb's status, as "kube-apiserver", if pdb's
	// resourceVersion is still the stored one (else a Conflict).
	UpdateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error
}

// evictionsRetry is kube's: conflicts with other writers of a pod or a
// budget are retried 20 times, every half second.
var evictionsRetry = wait.Backoff{Steps: 20, Duration: 500 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// maxDisruptedPods bounds status.disruptedPods: past it, evictions the
// disruption controller has not confirmed yet are too many.
const maxDisruptedPods = 2000

// EvictionREST serves pods/eviction: a POSTed Eviction deletes the pod
// when its PodDisruptionBudget allows, and takes the disruption from the
// budget's status; a pod that is not running (or is being deleted) goes
// at once. It is what kubectl drain uses.
type EvictionREST struct {
	storeless[policyv1.Eviction, *policyv1.Eviction]
	pods *generic.Store
	// status records the DisruptionTarget condition before the delete.
	status  rest.Updater
	budgets DisruptionBudgets
}

var (
	_ rest.Creater                  = (*EvictionREST)(nil)
	_ rest.GroupVersionKindProvider = (*EvictionREST)(nil)
	_ rest.GroupVersionAcceptor     = (*EvictionREST)(nil)
)

// GroupVersionKind implements rest.GroupVersionKindProvider: discovery
// lists policy/v1 Eviction (policy/v1beta1 bodies are accepted too).
func (r *EvictionREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return policyv1.SchemeGroupVersion.WithKind("Eviction")
}

// AcceptsGroupVersion implements rest.GroupVersionAcceptor: policy/v1 and
// policy/v1beta1 Evictions (the same fields) are accepted.
func (r *EvictionREST) AcceptsGroupVersion(gv schema.GroupVersion) bool {
	return gv == policyv1.SchemeGroupVersion || gv == schema.GroupVersion{Group: policyv1.GroupName, Version: "v1beta1"}
}

// Create implements rest.Creater: it evicts the pod the URL names, which
// must also be the Eviction's name.
func (r *EvictionREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	name := ""
	if info, ok := request.InfoFrom(ctx); ok {
		name = info.Name
	}
	eviction, ok := obj.(*policyv1.Eviction)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Eviction object: %T", obj))
	}
	if name != eviction.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Eviction object")
	}
	if eviction.DeleteOptions != nil && ptr.Deref(eviction.DeleteOptions.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		return nil, apierrors.NewInvalid(policyv1.SchemeGroupVersion.WithKind("Eviction").GroupKind(), name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option"),
		})
	}
	deleteOptions, err := propagateDryRun(eviction, options)
	if err != nil {
		return nil, err
	}
	if createValidation != nil {
		if err := createValidation(ctx, eviction.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if err := r.evict(ctx, name, deleteOptions); err != nil {
		return nil, err
	}
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: http.StatusCreated}, nil
}

// propagateDryRun returns the options of the delete: the Eviction's, with
// the request's dryRun, which must agree with the Eviction's.
func propagateDryRun(eviction *policyv1.Eviction, options *metav1.CreateOptions) (*metav1.DeleteOptions, error) {
	switch opts := eviction.DeleteOptions; {
	case opts == nil:
		return &metav1.DeleteOptions{DryRun: options.DryRun}, nil
	case len(opts.DryRun) == 0:
		opts.DryRun = options.DryRun
		return opts, nil
	case len(options.DryRun) == 0 || reflect.DeepEqual(options.DryRun, opts.DryRun):
		return opts, nil
	}
	// kube answers with a bare 500.
	return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Message: fmt.Sprintf("Non-matching dry-run options in request and content: %v and %v", options.DryRun, eviction.DeleteOptions.DryRun)}}
}

// evict deletes the pod if it may go, honouring its budget.
func (r *EvictionREST) evict(ctx context.Context, name string, options *metav1.DeleteOptions) error {
	pod, deleted, err := r.deleteIfUnguarded(ctx, name, options)
	if err != nil || deleted {
		return err
	}
	pdbs, err := r.budgetsOf(ctx, pod)
	if err != nil {
		return err
	}
	if len(pdbs) > 1 {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}}
	}
	// pinned: the pod is deleted only as it was read, so that it cannot
	// have become ready (and guarded) meanwhile.
	pinned, pdbName := false, ""
	if len(pdbs) == 1 {
		pdb := &pdbs[0]
		pdbName = pdb.Name
		if pinned = unhealthyPodMayGo(pod, pdb); !pinned {
			if err := r.takeDisruption(ctx, pod, pdb, isDryRun(options)); err != nil {
				return err
			}
		}
	}
	deleteOptions := options
	if pinned {
		deleteOptions = options.DeepCopy()
		setResourceVersionPrecondition(deleteOptions, pod.ResourceVersion)
	}
	err = r.markAndDelete(ctx, name, deleteOptions)
	if apierrors.IsConflict(err) && pinned && resourceVersionIsUnset(options) {
		// The pod changed since it was read: let the client try again.
		return tooManyRequests(pdbName)
	}
	return err
}

// deleteIfUnguarded reads the pod and, when no budget guards it (it does
// not run, or is being deleted), deletes it; conflicts with other writers
// are retried unless the client pinned a resourceVersion. It returns the
// pod it read, and whether it deleted it.
func (r *EvictionREST) deleteIfUnguarded(ctx context.Context, name string, options *metav1.DeleteOptions) (*corev1.Pod, bool, error) {
	shouldRetry := apierrors.IsConflict
	if !resourceVersionIsUnset(options) {
		shouldRetry = func(error) bool { return false }
	}
	var pod *corev1.Pod
	deleted := false
	err := retryOn(ctx, shouldRetry, func() error {
		obj, err := r.pods.Get(ctx, name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = obj.(*corev1.Pod)
		if !canIgnoreBudget(pod) {
			return nil
		}
		opts := options
		// A pending pod is deleted as read, lest it start running
		// meanwhile; a finished or deleted one has disrupted already.
		if enforcesResourceVersion(pod) && resourceVersionIsUnset(options) {
			opts = options.DeepCopy()
			setResourceVersionPrecondition(opts, pod.ResourceVersion)
		}
		if err := r.markAndDelete(ctx, name, opts); err != nil {
			return err
		}
		deleted = true
		return nil
	})
	return pod, deleted, err
}

// canIgnoreBudget: a pod that is not running, or is being deleted, has
// nothing left to disrupt.
func canIgnoreBudget(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return pod.DeletionTimestamp != nil
}

func enforcesResourceVersion(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return false
	}
	return pod.DeletionTimestamp == nil
}

func resourceVersionIsUnset(options *metav1.DeleteOptions) bool {
	return options.Preconditions == nil || options.Preconditions.ResourceVersion == nil
}

func setResourceVersionPrecondition(options *metav1.DeleteOptions, rv string) {
	if options.Preconditions == nil {
		options.Preconditions = &metav1.Preconditions{}
	}
	options.Preconditions.ResourceVersion = &rv
}

func isDryRun(options *metav1.DeleteOptions) bool { return len(options.DryRun) > 0 }

// budgetsOf returns the budgets of the pod's namespace that select it. A
// budget whose selector does not parse selects nothing.
func (r *EvictionREST) budgetsOf(ctx context.Context, pod *corev1.Pod) ([]policyv1.PodDisruptionBudget, error) {
	if r.budgets == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("poddisruptionbudgets are not served"))
	}
	all, err := r.budgets.List(ctx, pod.Namespace)
	if err != nil {
		return nil, err
	}
	var out []policyv1.PodDisruptionBudget
	for _, pdb := range all {
		s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err == nil && s.Matches(labels.Set(pod.Labels)) {
			out = append(out, pdb)
		}
	}
	return out, nil
}

// unhealthyPodMayGo: an unready pod does not count as healthy, so taking
// it disrupts nothing when the budget says unhealthy pods may always go,
// or (the default) when the budget is met without it.
func unhealthyPodMayGo(pod *corev1.Pod, pdb *policyv1.PodDisruptionBudget) bool {
	if podReady(pod) {
		return false
	}
	if ptr.Deref(pdb.Spec.UnhealthyPodEvictionPolicy, "") == policyv1.AlwaysAllow {
		return true
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0
}

// retryOn runs fn until it succeeds, fails with an error shouldRetry
// refuses, or evictionsRetry is spent (the last error then), or ctx ends.
func retryOn(ctx context.Context, shouldRetry func(error) bool, fn func() error) error {
	var lastErr error
	err := wait.ExponentialBackoffWithContext(ctx, evictionsRetry, func(context.Context) (bool, error) {
		err := fn()
		switch {
		case err == nil:
			return true, nil
		case shouldRetry(err):
			lastErr = err
			return false, nil
		}
		return false, err
	})
	if wait.Interrupted(err) && lastErr != nil {
		return lastErr
	}
	return err
}
