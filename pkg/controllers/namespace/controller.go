// Package namespace finishes the deletion of namespaces, as kube's
// namespace controller does: once a namespace is Terminating, it deletes
// its pods, then (once they are gone) everything else in it, then removes
// the "kubernetes" finalizer and the namespace itself. Objects that
// linger (a pod's grace period, finalizers of their own) keep the
// namespace Terminating until they are gone.
package namespace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Namespaces is what the controller needs of the namespaces storage.
type Namespaces interface {
	rest.Getter
	rest.Lister
	rest.Watcher
	rest.GracefulDeleter
}

// Resource is a namespaced resource whose objects the controller deletes.
type Resource struct {
	Name    string // "pods", "deployments.apps"
	Deleter rest.CollectionDeleter
	Lister  rest.Lister
}

// Controller finishes namespace deletions.
type Controller struct {
	namespaces Namespaces
	finalizer  rest.Updater // namespaces/finalize
	resources  []Resource
	// more, when set, returns the resources served for now (custom
	// resources), asked on every attempt.
	more func() []Resource

	// retry is how long a namespace with content left waits before the
	// next attempt.
	retry time.Duration

	mu      sync.Mutex
	pending map[string]bool
	wake    queue.Signal
}

// New returns a controller over the given storages: resources, and
// those more returns when it is not nil (the resources served for now:
// custom resources, which come and go).
func New(namespaces Namespaces, finalizer rest.Updater, resources []Resource, more func() []Resource) *Controller {
	return &Controller{
		namespaces: namespaces, finalizer: finalizer, resources: resources, more: more,
		retry: time.Second, pending: map[string]bool{}, wake: queue.NewSignal(),
	}
}

// Run works until ctx ends: it follows the namespaces and finishes each
// deletion it sees.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.work(ctx) })
	follow.New(follow.Config{
		Name: "namespace controller: namespaces", Source: c.namespaces,
		Handler: follow.Objects[*corev1.Namespace]{
			New: func() *corev1.Namespace { return &corev1.Namespace{} },
			// List nil: every listed namespace is seen as ADDED.
			Event: func(t watch.EventType, ns *corev1.Namespace) {
				if t != watch.Deleted && ns.DeletionTimestamp != nil && slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
					c.enqueue(ns.Name)
				}
			},
		},
	}).Run(ctx)
	wg.Wait()
}

func (c *Controller) enqueue(name string) {
	c.mu.Lock()
	c.pending[name] = true
	c.mu.Unlock()
	c.wake.Notify()
}

// work processes queued namespaces; those not done are tried again after
// the retry period.
func (c *Controller) work(ctx context.Context) {
	ticker := time.NewTicker(c.retry)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-ticker.C:
		}
		c.mu.Lock()
		names := make([]string, 0, len(c.pending))
		for n := range c.pending {
			names = append(names, n)
		}
		c.mu.Unlock()
		for _, name := range names {
			done, err := c.sync(ctx, name)
			if err != nil && ctx.Err() == nil {
				slog.Warn("namespace controller: deleting a namespace", "namespace", name, "error", err)
			}
			if done {
				c.mu.Lock()
				delete(c.pending, name)
				c.mu.Unlock()
			}
		}
	}
}

// sync moves the deletion of one namespace on, and reports when nothing
// is left to do for it.
func (c *Controller) sync(ctx context.Context, name string) (bool, error) {
	clusterCtx := request.WithNamespace(ctx, "")
	obj, err := c.namespaces.Get(clusterCtx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil {
		return true, nil // not being deleted (any more)
	}
	if slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		remaining, err := c.deleteContent(ctx, name)
		if err != nil || remaining > 0 {
			return false, err
		}
		if err := c.finalize(clusterCtx, ns); err != nil {
			return false, err
		}
	}
	_, _, err = c.namespaces.Delete(clusterCtx, name, nil, &metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	return true, nil
}

// deleteContent deletes every object in the namespace and returns how
// many are still there (deleting gracefully, or waiting for finalizers).
// Pods go first, and nothing else is deleted while one is left (kube's
// OrderedNamespaceDeletion, GA in 1.34): a pod still running may need
// what else the namespace holds (its secrets, config maps, service
// account) until it has stopped.
func (c *Controller) deleteContent(ctx context.Context, namespace string) (int, error) {
	nsCtx := request.WithNamespace(ctx, namespace)
	resources := c.resources
	if c.more != nil {
		resources = append(slices.Clip(resources), c.more()...)
	}
	if i := slices.IndexFunc(resources, func(r Resource) bool { return r.Name == podsResource }); i >= 0 {
		left, err := deleteAll(nsCtx, resources[i])
		if err != nil || left > 0 {
			return left, err
		}
		resources = slices.Delete(slices.Clone(resources), i, i+1)
	}
	remaining := 0
	var errs []error
	for _, r := range resources {
		left, err := deleteAll(nsCtx, r)
		if err != nil {
			errs = append(errs, err)
		}
		remaining += left
	}
	return remaining, errors.Join(errs...)
}

// podsResource names the pods among the Resources.
const podsResource = "pods"

// deleteAll deletes the objects of r in ctx's namespace and returns how
// many are still there.
func deleteAll(ctx context.Context, r Resource) (int, error) {
	policy := metav1.DeletePropagationBackground
	if _, err := r.Deleter.DeleteCollection(ctx, nil, &metav1.DeleteOptions{PropagationPolicy: &policy},
		&metainternalversion.ListOptions{}); err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	left, err := r.Lister.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", r.Name, err)
	}
	return len(left.Items), nil
}

// finalize removes the "kubernetes" finalizer through namespaces/finalize.
func (c *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	info := &rest.DefaultUpdatedObjectInfo{Obj: ns, Transformers: []rest.TransformFunc{
		func(_ context.Context, _, current runtime.Object) (runtime.Object, error) {
			cur := current.DeepCopyObject().(*corev1.Namespace)
			cur.Spec.Finalizers = slices.DeleteFunc(cur.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
			return cur, nil
		},
	}}
	_, _, err := c.finalizer.Update(ctx, ns.Name, info, nil, nil, false, &metav1.UpdateOptions{})
	return err
}
