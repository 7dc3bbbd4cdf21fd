package generic

import (
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// deletePlan is what beforeDelete decided for an object.
type deletePlan struct {
	// graceful: the object stays until its (new) grace period ends.
	graceful bool
	// pending: a graceful deletion is already under way and this request
	// does not shorten it: nothing to change.
	pending bool
}

// beforeDelete validates the options against the object and, for resources
// with graceful deletion, sets its deletionTimestamp and grace period on
// obj (kube's rest.BeforeDelete).
func (e *Store) beforeDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) (deletePlan, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return deletePlan{}, apierrors.NewInternalError(err)
	}
	if errs := metav1validation.ValidateDeleteOptions(options); len(errs) > 0 {
		return deletePlan{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	if err := e.checkDeletePreconditions(m, options.Preconditions); err != nil {
		return deletePlan{}, err
	}
	// A negative grace period counts as one second.
	if g := options.GracePeriodSeconds; g != nil && *g < 0 {
		options.GracePeriodSeconds = ptrInt64(1)
	}
	if g := m.GetDeletionGracePeriodSeconds(); g != nil && *g < 0 {
		m.SetDeletionGracePeriodSeconds(ptrInt64(1))
	}
	gracefulStrategy, ok := e.deleteStrategy.(rest.RESTGracefulDeleteStrategy)
	if !ok {
		return deletePlan{}, nil
	}
	if ts := m.GetDeletionTimestamp(); ts != nil {
		current := m.GetDeletionGracePeriodSeconds()
		if current == nil || *current == 0 {
			return deletePlan{}, nil // finish a deletion that was cut short
		}
		if options.GracePeriodSeconds == nil {
			options.GracePeriodSeconds = current
			return deletePlan{pending: true}, nil
		}
		// Only a shorter grace period may be asked for.
		period := *options.GracePeriodSeconds
		if period >= *current {
			return deletePlan{pending: true}, nil
		}
		end := metav1.NewTime(ts.Add(-time.Duration(*current) * time.Second).Add(time.Duration(period) * time.Second))
		m.SetDeletionTimestamp(&end)
		m.SetDeletionGracePeriodSeconds(&period)
		return deletePlan{graceful: true}, nil
	}
	if !gracefulStrategy.CheckGracefulDelete(ctx, obj, options) {
		return deletePlan{}, nil
	}
	if options.GracePeriodSeconds == nil {
		return deletePlan{}, apierrors.NewInternalError(fmt.Errorf("options.GracePeriodSeconds should not be nil"))
	}
	end := metav1.NewTime(time.Now().Add(time.Duration(*options.GracePeriodSeconds) * time.Second))
	m.SetDeletionTimestamp(&end)
	m.SetDeletionGracePeriodSeconds(options.GracePeriodSeconds)
	if m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	return deletePlan{graceful: true}, nil
}

func (e *Store) checkDeletePreconditions(m metav1.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	// kube names the kind where the resource belongs in these messages.
	gr := schema.GroupResource{Group: e.kind.Group, Resource: e.kind.Kind}
	if p.UID != nil && *p.UID != m.GetUID() {
		return apierrors.NewConflict(gr, m.GetName(), fmt.Errorf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			*p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return apierrors.NewConflict(gr, m.GetName(), fmt.Errorf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// gcFinalizers returns the finalizers the object should carry for the
// propagation policy of this delete (orphan, foregroundDeletion), and
// whether they differ from its current ones. Like kube, the server only
// records the policy; a garbage collector acts on it.
func (e *Store) gcFinalizers(ctx context.Context, m metav1.Object, options *metav1.DeleteOptions) (bool, []string) {
	policy := rest.GarbageCollectionPolicy("")
	if s, ok := e.deleteStrategy.(rest.GarbageCollectionDeleteStrategy); ok {
		policy = s.DefaultGarbageCollectionPolicy(ctx)
	}
	if policy == rest.Unsupported {
		return false, m.GetFinalizers()
	}
	orphan, foreground := policy == rest.OrphanDependents, false
	switch {
	case options.OrphanDependents != nil: //nolint:staticcheck // still honoured, as kube does
		orphan, foreground = *options.OrphanDependents, false //nolint:staticcheck
	case options.PropagationPolicy != nil:
		orphan = *options.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *options.PropagationPolicy == metav1.DeletePropagationForeground
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerOrphanDependents):
		orphan = true
	case slices.Contains(m.GetFinalizers(), metav1.FinalizerDeleteDependents):
		orphan, foreground = false, true
	}
	var out []string
	for _, f := range m.GetFinalizers() {
		if f != metav1.FinalizerOrphanDependents && f != metav1.FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, metav1.FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, metav1.FinalizerDeleteDependents)
	}
	if sameSet(out, m.GetFinalizers()) {
		return false, m.GetFinalizers()
	}
	return true, out
}

func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}

// markAsDeleting records a deletion that waits for finalizers.
func markAsDeleting(m metav1.Object, now time.Time) {
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	if ts := m.GetDeletionTimestamp(); ts == nil || ts.After(now) {
		t := metav1.NewTime(now)
		m.SetDeletionTimestamp(&t)
	}
	m.SetDeletionGracePeriodSeconds(ptrInt64(0))
}

// finalizeDelete is what a delete returns: the object, or a Status naming
// it, by the resource's choice (ReturnDeletedObject).
func (e *Store) finalizeDelete(obj runtime.Object) (runtime.Object, error) {
	if e.returnDeletedObject {
		return obj, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name:  m.GetName(),
			Group: e.qualifiedResource.Group,
			Kind:  e.qualifiedResource.Resource, // kube puts the resource here
			UID:   m.GetUID(),
		},
	}, nil
}

func ptrInt64(v int64) *int64 { return &v }
