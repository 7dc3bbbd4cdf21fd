package garbagecollector

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// node is what the collector knows of one object.
type node struct {
	resource  *Resource
	namespace string
	name      string
	uid       types.UID
	// resourceVersion is the version seen: the collector deletes only
	// that version, so that a change it has not seen yet (an owner
	// reference removed, the object orphaned) is never overtaken.
	resourceVersion string
	owners          []metav1.OwnerReference
	deleting        bool
	finalizers      []string
}

func (n *node) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }

// waitingForDependents reports an owner deleted in the foreground: it
// stays until its blocking dependents are gone.
func (n *node) waitingForDependents() bool {
	return n.deleting && n.has(metav1.FinalizerDeleteDependents)
}

// graph is the ownership graph: every object by UID, and the dependents
// of each owner UID (whether or not the owner exists).
type graph struct {
	nodes      map[types.UID]*node
	dependents map[types.UID]map[types.UID]bool
}

func newGraph() *graph {
	return &graph{nodes: map[types.UID]*node{}, dependents: map[types.UID]map[types.UID]bool{}}
}

// upsert records n, replacing what was known of its object.
func (g *graph) upsert(n *node) {
	if old := g.nodes[n.uid]; old != nil {
		g.unlinkOwners(old)
	}
	g.nodes[n.uid] = n
	for _, ref := range n.owners {
		deps := g.dependents[ref.UID]
		if deps == nil {
			deps = map[types.UID]bool{}
			g.dependents[ref.UID] = deps
		}
		deps[n.uid] = true
	}
}

// remove forgets the object uid and returns what it knew of it (nil:
// nothing).
func (g *graph) remove(uid types.UID) *node {
	n := g.nodes[uid]
	if n == nil {
		return nil
	}
	g.unlinkOwners(n)
	delete(g.nodes, uid)
	return n
}

func (g *graph) unlinkOwners(n *node) {
	for _, ref := range n.owners {
		if deps := g.dependents[ref.UID]; deps != nil {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(g.dependents, ref.UID)
			}
		}
	}
}

// dependentsOf returns the objects that name uid as an owner.
func (g *graph) dependentsOf(uid types.UID) []*node {
	var out []*node
	for dep := range g.dependents[uid] {
		if n := g.nodes[dep]; n != nil {
			out = append(out, n)
		}
	}
	return out
}

// ownerOf returns the existing owner ref names: the object with its UID,
// when it is of the kind the reference says (a reference whose UID
// belongs to another kind names no object, as for kube).
func (g *graph) ownerOf(ref metav1.OwnerReference) *node {
	n := g.nodes[ref.UID]
	if n == nil || n.resource.Kind != refKind(ref) {
		return nil
	}
	return n
}

// refKind is the group and kind an owner reference names.
func refKind(ref metav1.OwnerReference) schema.GroupKind {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
}
