package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// runFollower lists the resource into the graph, then follows its
// watch; when the watch ends it lists again.
func (c *Controller) runFollower(ctx context.Context, f *follower) {
	ctx = request.WithNamespace(ctx, "")
	for ctx.Err() == nil {
		if err := c.listAndWatch(ctx, f); err != nil && ctx.Err() == nil {
			slog.Warn("garbage collector: following a resource", "resource", f.resource.Name, "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(c.resync):
			}
		}
	}
}

func (c *Controller) listAndWatch(ctx context.Context, f *follower) error {
	list, err := f.resource.Store.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	listed := map[types.UID]bool{}
	var nodes []*node
	for _, item := range list.Items {
		n, err := decodeNode(f.resource, item)
		if err != nil {
			return err
		}
		listed[n.uid] = true
		nodes = append(nodes, n)
	}
	c.mu.Lock()
	if c.following[f.resource.Name] != f {
		c.mu.Unlock()
		return nil // stopped: its objects left the graph
	}
	// Objects deleted while no watch ran are gone from the list.
	for uid, n := range c.graph.nodes {
		if n.resource == f.resource && !listed[uid] {
			c.removeLocked(uid)
		}
	}
	for _, n := range nodes {
		c.upsertLocked(n)
	}
	f.synced = true
	c.signal() // the queue may have waited for this list
	c.mu.Unlock()

	w, err := f.resource.Store.Watch(ctx, &metainternalversion.ListOptions{
		Watch: true, ResourceVersion: strconv.FormatInt(list.ResourceVersion, 10),
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("watch ended")
			}
			if err := c.apply(f, ev); err != nil {
				return err
			}
		}
	}
}

// apply records one watch event of f's resource in the graph.
func (c *Controller) apply(f *follower, ev storage.Event) error {
	switch ev.Type {
	case watch.Error:
		return ev.Err
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return nil
	}
	n, err := decodeNode(f.resource, ev.Object)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.following[f.resource.Name] != f {
		return nil // stopped: its objects left the graph
	}
	if ev.Type == watch.Deleted {
		c.removeLocked(n.uid)
	} else {
		c.upsertLocked(n)
	}
	return nil
}

// upsertLocked records an object and queues it: it may be an orphan, an
// owner being deleted, or a dependent whose owners are gone.
func (c *Controller) upsertLocked(n *node) {
	c.graph.upsert(n)
	if len(n.owners) > 0 || n.deleting {
		c.enqueueLocked(n.uid)
	}
}

// removeLocked forgets a deleted object and queues its dependents (their
// owner is gone) and its owners (one may wait for it to go).
func (c *Controller) removeLocked(uid types.UID) {
	n := c.graph.remove(uid)
	if n == nil {
		return
	}
	for _, dep := range c.graph.dependentsOf(uid) {
		c.enqueueLocked(dep.uid)
	}
	for _, ref := range n.owners {
		c.enqueueLocked(ref.UID)
	}
}

// decodeNode reads the metadata of a stored object.
func decodeNode(r *Resource, obj *storage.Object) (*node, error) {
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(obj.Data(), &m); err != nil {
		return nil, storage.NewInternalError(obj.Key, err)
	}
	return &node{
		resource: r, namespace: m.Namespace, name: m.Name, uid: m.UID, resourceVersion: strconv.FormatInt(obj.ResourceVersion, 10),
		owners: m.OwnerReferences, deleting: m.DeletionTimestamp != nil, finalizers: m.Finalizers,
	}, nil
}
