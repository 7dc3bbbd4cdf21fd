package garbagecollector

import (
	"context"
	"encoding/json"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// runFollower keeps f's resource in the graph until ctx ends: a list,
// then the watch from its revision, again after the watch ends.
func (c *Controller) runFollower(ctx context.Context, f *follower) {
	follow.New(follow.Config{
		Name: "garbage collector: " + f.resource.Name, Source: f.resource.Store, Handler: feeder{c, f},
	}).Run(ctx)
}

// feeder hands what a follow loop reads of f's resource to the graph.
type feeder struct {
	c *Controller
	f *follower
}

// OnList records the listed objects in the graph, forgets those of the
// resource that are gone, and marks the resource synced.
func (fd feeder) OnList(items []*storage.Object, _ int64) error {
	c, f := fd.c, fd.f
	listed := map[types.UID]bool{}
	nodes := make([]*node, 0, len(items))
	for _, item := range items {
		n, err := decodeNode(f.resource, item)
		if err != nil {
			return err
		}
		listed[n.uid] = true
		nodes = append(nodes, n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.following[f.resource.Name] != f {
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
	c.wake.Notify() // the queue may have waited for this list
	return nil
}

// OnEvent records one watch event of f's resource in the graph.
func (fd feeder) OnEvent(ev storage.Event) error {
	c, f := fd.c, fd.f
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
