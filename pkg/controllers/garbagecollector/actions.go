package garbagecollector

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// owners are an object's owner references sorted by what became of the
// owner.
type owners struct {
	// solid exist and are not being deleted in the foreground; unresolved
	// are of a kind no followed resource serves (kept as solid, as kube
	// keeps dependents whose owner it cannot look up).
	solid, unresolved int
	// waiting exist and wait for their dependents (foreground deletion).
	waiting int
	// dangling name no object in the graph, of a followed resource.
	dangling []danglingOwner
}

// danglingOwner is a reference to an owner missing from the graph, and
// the resource that would hold it.
type danglingOwner struct {
	ref      metav1.OwnerReference
	resource *Resource
}

// process moves on what the object uid needs of the collector. Nodes are
// never changed once in the graph (a change replaces them), so what it
// reads under the lock stays valid after.
func (c *Controller) process(ctx context.Context, uid types.UID) error {
	c.mu.Lock()
	n := c.graph.nodes[uid]
	var deps []*node
	var hasDependents map[types.UID]bool
	var o owners
	if n != nil {
		deps = c.graph.dependentsOf(uid)
		hasDependents = map[types.UID]bool{}
		for _, d := range deps {
			hasDependents[d.uid] = len(c.graph.dependents[d.uid]) > 0
		}
		hasDependents[uid] = len(deps) > 0
		o = c.ownersLocked(n)
	}
	c.mu.Unlock()
	switch {
	case n == nil:
		return nil
	case n.deleting && n.has(metav1.FinalizerOrphanDependents):
		return c.orphanDependents(ctx, n, deps)
	case n.waitingForDependents():
		return c.deleteDependents(ctx, n, deps, hasDependents)
	case n.deleting || len(n.owners) == 0:
		return nil
	}
	gone, err := c.absentOwners(ctx, n, o.dangling)
	if err != nil {
		return err
	}
	o.solid += len(o.dangling) - len(gone)
	switch {
	case o.solid+o.unresolved > 0:
		if len(gone) == 0 {
			return nil
		}
		// As kube, references to owners that are gone are dropped while
		// other owners keep the object.
		return c.updateMeta(ctx, n, func(m metav1.Object) { m.SetOwnerReferences(withoutOwners(m.GetOwnerReferences(), gone...)) })
	case o.waiting > 0:
		// Its owners go in the foreground: so does it, when it has
		// dependents of its own, so that they wait for those.
		return c.delete(ctx, n, propagation(hasDependents[uid]))
	default:
		return c.delete(ctx, n, metav1.DeletePropagationBackground)
	}
}

func (c *Controller) ownersLocked(n *node) owners {
	var o owners
	kinds := map[schema.GroupKind]*Resource{}
	for _, f := range c.following {
		kinds[f.resource.Kind] = f.resource
	}
	for _, ref := range n.owners {
		owner := c.graph.ownerOf(ref)
		switch {
		case owner == nil && kinds[refKind(ref)] == nil:
			o.unresolved++
		case owner == nil:
			o.dangling = append(o.dangling, danglingOwner{ref: ref, resource: kinds[refKind(ref)]})
		case owner.waitingForDependents():
			o.waiting++
		default:
			o.solid++
		}
	}
	return o
}

// absentOwners returns the UIDs of the owners missing from the graph that
// storage confirms are gone. Each resource is followed by its own watch,
// so a dependent's event may come before its owner's: like kube's
// collector, which looks a missing owner up before it deletes, this one
// never takes an owner it has not seen yet for gone.
func (c *Controller) absentOwners(ctx context.Context, n *node, dangling []danglingOwner) ([]types.UID, error) {
	var gone []types.UID
	for _, d := range dangling {
		ns := ""
		if d.resource.Namespaced {
			ns = n.namespace
		}
		obj, err := d.resource.Store.Get(request.WithNamespace(ctx, ns), d.ref.Name, &metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			gone = append(gone, d.ref.UID)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking up owner %s %s: %w", d.resource.Name, d.ref.Name, err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if m.GetUID() != d.ref.UID {
			gone = append(gone, d.ref.UID) // another object took its name
		}
	}
	return gone, nil
}

// orphanDependents removes owner from its dependents' references, then
// its orphan finalizer: the owner goes, its dependents stay.
func (c *Controller) orphanDependents(ctx context.Context, owner *node, deps []*node) error {
	for _, d := range deps {
		if err := c.updateMeta(ctx, d, func(m metav1.Object) { m.SetOwnerReferences(withoutOwners(m.GetOwnerReferences(), owner.uid)) }); err != nil {
			return fmt.Errorf("orphaning %s %s/%s: %w", d.resource.Name, d.namespace, d.name, err)
		}
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerOrphanDependents)
}

// deleteDependents deletes the dependents of an owner deleted in the
// foreground, and removes its finalizer once none that blocks it
// (blockOwnerDeletion) is left.
func (c *Controller) deleteDependents(ctx context.Context, owner *node, deps []*node, hasDependents map[types.UID]bool) error {
	blocking := 0
	for _, d := range deps {
		if ref := referenceTo(d, owner.uid); ref != nil && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			blocking++
		}
		if d.deleting {
			continue
		}
		if err := c.delete(ctx, d, propagation(hasDependents[d.uid])); err != nil {
			return err
		}
	}
	if blocking > 0 {
		return nil // the deletions of the blocking dependents queue the owner again
	}
	return c.removeFinalizer(ctx, owner, metav1.FinalizerDeleteDependents)
}

// propagation is the policy a dependent is deleted with under an owner
// deleted in the foreground: foreground too when it has dependents.
func propagation(hasDependents bool) metav1.DeletionPropagation {
	if hasDependents {
		return metav1.DeletePropagationForeground
	}
	return metav1.DeletePropagationBackground
}

func referenceTo(n *node, owner types.UID) *metav1.OwnerReference {
	for i := range n.owners {
		if n.owners[i].UID == owner {
			return &n.owners[i]
		}
	}
	return nil
}

func withoutOwners(refs []metav1.OwnerReference, uids ...types.UID) []metav1.OwnerReference {
	return slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(uids, r.UID) })
}

func (c *Controller) removeFinalizer(ctx context.Context, n *node, finalizer string) error {
	return c.updateMeta(ctx, n, func(m metav1.Object) {
		m.SetFinalizers(slices.DeleteFunc(slices.Clone(m.GetFinalizers()), func(f string) bool { return f == finalizer }))
	})
}

// delete deletes the object n, if it is still the version the graph
// holds: a newer one comes with its own event, which queues it again.
func (c *Controller) delete(ctx context.Context, n *node, policy metav1.DeletionPropagation) error {
	uid, rv := n.uid, n.resourceVersion
	opts := &metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	_, _, err := n.resource.Store.Delete(request.WithNamespace(ctx, n.namespace), n.name, nil, opts)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone already, changed, or replaced by another object
	}
	return err
}

// updateMeta changes the metadata of the object n, if it is still the one
// with n's UID.
func (c *Controller) updateMeta(ctx context.Context, n *node, change func(metav1.Object)) error {
	info := &metadataUpdate{uid: n.uid, change: change}
	_, _, err := n.resource.Store.Update(request.WithNamespace(ctx, n.namespace), n.name, info, nil, nil, false, &metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced (the UID precondition failed)
	}
	return err
}

// metadataUpdate is an update that changes only the current object's
// metadata (the store retries it on a newer object when a write comes
// between).
type metadataUpdate struct {
	uid    types.UID
	change func(metav1.Object)
}

func (u *metadataUpdate) Preconditions() *metav1.Preconditions {
	return &metav1.Preconditions{UID: &u.uid}
}

func (u *metadataUpdate) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	obj := old.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	u.change(m)
	return obj, nil
}
