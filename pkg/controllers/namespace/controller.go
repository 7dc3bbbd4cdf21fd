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
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// GVR names it, at the version it is read at: conditions and errors
	// name it so (kube's "pods.", "/v1, Resource=pods").
	GVR     schema.GroupVersionResource
	Deleter rest.CollectionDeleter
	Lister  rest.Lister
}

// Controller finishes namespace deletions.
type Controller struct {
	namespaces Namespaces
	finalizer  rest.Updater // namespaces/finalize
	status     rest.Updater // namespaces/status: the deletion's conditions
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
func New(namespaces Namespaces, finalizer, status rest.Updater, resources []Resource, more func() []Resource) *Controller {
	return &Controller{
		namespaces: namespaces, finalizer: finalizer, status: status, resources: resources, more: more,
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
	c.wake.Every(ctx, c.retry, func(bool) {
		c.mu.Lock()
		names := slices.Collect(maps.Keys(c.pending))
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
	})
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
		found := c.deleteContent(ctx, ns)
		if err := c.writeConditions(clusterCtx, ns, found.conditions()); err != nil {
			return false, err
		}
		if err := errors.Join(found.errs...); err != nil || found.remains() {
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
