package namespace

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// podsGVR names the pods among the Resources.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// content is what one pass over a namespace's resources found.
type content struct {
	// podsRemain: pods were left, so nothing else was deleted (and, as in
	// kube, no totals are reported).
	podsRemain bool
	remaining  map[schema.GroupVersionResource]int
	finalizers map[string]int // objects left, by finalizer
	errs       []error        // each resource's failure
}

func (c *content) remains() bool { return len(c.remaining) > 0 }

// deleteContent deletes every object in the namespace and says what is
// still there (deleting gracefully, or waiting for finalizers). Pods go
// first, and nothing else is deleted while one is left (kube's
// OrderedNamespaceDeletion, GA in 1.34): a pod still running may need
// what else the namespace holds (its secrets, config maps, service
// account) until it has stopped.
func (c *Controller) deleteContent(ctx context.Context, ns *corev1.Namespace) *content {
	nsCtx := request.WithNamespace(ctx, ns.Name)
	resources := c.resources
	if c.more != nil {
		resources = append(slices.Clip(resources), c.more()...)
	}
	found := &content{remaining: map[schema.GroupVersionResource]int{}, finalizers: map[string]int{}}
	if i := slices.IndexFunc(resources, func(r Resource) bool { return r.GVR == podsGVR }); i >= 0 {
		found.add(resources[i], deleteAll(nsCtx, resources[i], ns.DeletionTimestamp))
		if found.remaining[podsGVR] > 0 {
			found.podsRemain = true
			return found
		}
		resources = slices.Delete(slices.Clone(resources), i, i+1)
	}
	for _, r := range resources {
		found.add(r, deleteAll(nsCtx, r, ns.DeletionTimestamp))
	}
	return found
}

func (c *content) add(r Resource, left leftOver) {
	if left.err != nil {
		c.errs = append(c.errs, left.err)
	}
	if left.objects == 0 {
		return
	}
	c.remaining[r.GVR] = left.objects
	for f, n := range left.finalizers {
		c.finalizers[f] += n
	}
}

// leftOver is what deleteAll left of a resource.
type leftOver struct {
	objects    int
	finalizers map[string]int
	err        error
}

// deleteAll deletes the objects of r in ctx's namespace and says what is
// left. Objects left that neither wait for finalizers nor are pods within
// their grace period are an error, as in kube.
func deleteAll(ctx context.Context, r Resource, deletedAt *metav1.Time) leftOver {
	grace, err := gracePeriod(ctx, r, deletedAt)
	if err != nil {
		return leftOver{err: err}
	}
	policy := metav1.DeletePropagationBackground
	if _, err := r.Deleter.DeleteCollection(ctx, nil, &metav1.DeleteOptions{PropagationPolicy: &policy},
		&metainternalversion.ListOptions{}); err != nil {
		return leftOver{err: err}
	}
	list, err := r.Lister.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return leftOver{err: err}
	}
	left := leftOver{objects: len(list.Items), finalizers: map[string]int{}}
	for _, item := range list.Items {
		var meta metav1.PartialObjectMetadata
		if err := item.Decode(&meta); err != nil {
			return leftOver{objects: left.objects, err: err}
		}
		for _, f := range meta.Finalizers {
			left.finalizers[f]++
		}
	}
	if left.objects > 0 && grace == 0 && len(left.finalizers) == 0 {
		left.err = fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %v", request.NamespaceValue(ctx), r.GVR)
	}
	return left
}

// gracePeriod is how long r's objects may still take to go: for pods, the
// longest grace period of those not done yet, counted from the
// namespace's deletion; nothing for other resources.
func gracePeriod(ctx context.Context, r Resource, deletedAt *metav1.Time) (time.Duration, error) {
	if r.GVR != podsGVR {
		return 0, nil
	}
	list, err := r.Lister.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	var longest time.Duration
	for _, item := range list.Items {
		var pod corev1.Pod
		if err := item.Decode(&pod); err != nil {
			return 0, err
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.Spec.TerminationGracePeriodSeconds == nil {
			continue
		}
		longest = max(longest, time.Duration(*pod.Spec.TerminationGracePeriodSeconds)*time.Second)
	}
	if deletedAt == nil || time.Since(deletedAt.Time) >= longest {
		return 0, nil
	}
	return longest, nil
}

// conditionTypes are the conditions the controller keeps on a namespace
// being deleted, in kube's order, each with its reason and message when
// all is well.
var conditionTypes = []struct {
	t               corev1.NamespaceConditionType
	reason, message string
}{
	{corev1.NamespaceDeletionDiscoveryFailure, "ResourcesDiscovered", "All resources successfully discovered"},
	{corev1.NamespaceDeletionGVParsingFailure, "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{corev1.NamespaceDeletionContentFailure, "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{corev1.NamespaceContentRemaining, "ContentRemoved", "All content successfully removed"},
	{corev1.NamespaceFinalizersRemaining, "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

// conditions are the conditions that say what went wrong, kube's: those
// not among them are set to their all-is-well form. Discovery never fails
// here (the resources are the server's own).
func (c *content) conditions() map[corev1.NamespaceConditionType]corev1.NamespaceCondition {
	out := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	set := func(t corev1.NamespaceConditionType, reason, message string) {
		out[t] = corev1.NamespaceCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message}
	}
	if len(c.errs) > 0 {
		msgs := make([]string, len(c.errs))
		for i, err := range c.errs {
			msgs[i] = err.Error()
		}
		slices.Sort(msgs)
		set(corev1.NamespaceDeletionContentFailure, "ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", ")))
	}
	if c.podsRemain {
		return out
	}
	if len(c.remaining) > 0 {
		var left []string
		for gvr, n := range c.remaining {
			left = append(left, fmt.Sprintf("%s.%s has %d resource instances", gvr.Resource, gvr.Group, n))
		}
		slices.Sort(left)
		set(corev1.NamespaceContentRemaining, "SomeResourcesRemain", "Some resources are remaining: "+strings.Join(left, ", "))
	}
	if len(c.finalizers) > 0 {
		var left []string
		for _, f := range slices.Sorted(maps.Keys(c.finalizers)) {
			left = append(left, fmt.Sprintf("%s in %d resource instances", f, c.finalizers[f]))
		}
		set(corev1.NamespaceFinalizersRemaining, "SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: "+strings.Join(left, ", "))
	}
	return out
}

// writeConditions gives ns the deletion's conditions through
// namespaces/status when they differ from what it has: a condition's
// transition time changes only with its status. A failed write is logged,
// as kube's controller does: the next attempt writes them again.
func (c *Controller) writeConditions(ctx context.Context, ns *corev1.Namespace, failed map[corev1.NamespaceConditionType]corev1.NamespaceCondition) error {
	updated := ns.DeepCopy()
	now := metav1.Now()
	changed := false
	for _, ct := range conditionTypes {
		want, ok := failed[ct.t]
		if !ok {
			want = corev1.NamespaceCondition{Type: ct.t, Status: corev1.ConditionFalse, Reason: ct.reason, Message: ct.message}
		}
		i := slices.IndexFunc(updated.Status.Conditions, func(c corev1.NamespaceCondition) bool { return c.Type == ct.t })
		if i < 0 {
			want.LastTransitionTime = now
			updated.Status.Conditions = append(updated.Status.Conditions, want)
			changed = true
			continue
		}
		have := &updated.Status.Conditions[i]
		if have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
			continue
		}
		if have.Status != want.Status {
			have.LastTransitionTime = now
		}
		have.Status, have.Reason, have.Message = want.Status, want.Reason, want.Message
		changed = true
	}
	if !changed {
		return nil
	}
	_, _, err := c.status.Update(ctx, ns.Name, &rest.DefaultUpdatedObjectInfo{Obj: updated}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil && ctx.Err() == nil {
		slog.Warn("namespace controller: writing the deletion's conditions", "namespace", ns.Name, "error", err)
	}
	return ctx.Err()
}
