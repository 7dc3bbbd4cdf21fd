// Package garbagecollector deletes the dependents of deleted owners
// (metadata.ownerReferences), as kube-controller-manager's garbage
// collector does, for a server that runs without one (envtest):
//
//   - an object whose owners are all gone is deleted (in the background);
//   - an owner deleted with propagationPolicy Foreground (finalizer
//     foregroundDeletion) has its dependents deleted, and goes itself
//     once those that block it (blockOwnerDeletion) are gone;
//   - an owner deleted with propagationPolicy Orphan (finalizer orphan)
//     is removed from its dependents' owner references, then goes.
//
// It follows every resource through the registry's list and watch and
// keeps the ownership graph in memory, as kube's does through informers.
// Off by default: a kube-controller-manager running against the server
// has its own.
package garbagecollector

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Storage is what the collector needs of a resource's storage.
type Storage interface {
	rest.Getter
	rest.Lister
	rest.Watcher
	rest.GracefulDeleter
	rest.Updater
}

// Resource is a resource whose objects the collector follows.
type Resource struct {
	// Name is the resource and group ("pods", "widgets.example.com").
	Name string
	// Kind is its objects' group and kind, as owner references name it.
	Kind       schema.GroupKind
	Namespaced bool
	Store      Storage
}

// Controller is the garbage collector.
type Controller struct {
	resources []Resource
	// more, when set, returns the resources served for now (custom
	// resources), asked every resync.
	more func() []Resource
	// resync is how often the resources are looked at again and failed
	// work is retried.
	resync time.Duration

	mu    sync.Mutex
	graph *graph
	// following are the resources whose objects are in the graph, by
	// name, and whether their first list is in.
	following map[string]*follower
	queue     map[types.UID]bool
	wake      queue.Signal
}

// follower lists and watches one resource into the graph.
type follower struct {
	resource *Resource
	synced   bool
	stop     context.CancelFunc
	done     chan struct{}
}

// New returns a collector over resources, and those more returns when
// it is not nil.
func New(resources []Resource, more func() []Resource) *Controller {
	return &Controller{
		resources: resources, more: more, resync: time.Second,
		graph: newGraph(), following: map[string]*follower{}, queue: map[types.UID]bool{}, wake: queue.NewSignal(),
	}
}

// GraphHasUID reports whether the collector has seen every object uids
// names (kube's GarbageCollector.GraphHasUID). An owner deleted with
// propagationPolicy Orphan right after its dependent was created may be
// processed before the dependent's watch event arrives, and the dependent
// then looks like the child of an owner that is gone, as in kube: tests
// that orphan wait for the graph first.
func (c *Controller) GraphHasUID(uids ...types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, uid := range uids {
		if c.graph.nodes[uid] == nil {
			return false
		}
	}
	return true
}

// Run collects until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	ticker := time.NewTicker(c.resync)
	defer ticker.Stop()
	for {
		c.follow(ctx)
		c.work(ctx)
		select {
		case <-ctx.Done():
			c.mu.Lock()
			followers := c.following
			c.mu.Unlock()
			for _, f := range followers {
				<-f.done
			}
			return
		case <-c.wake:
		case <-ticker.C:
		}
	}
}

// follow starts following the resources served now and stops following
// those that are no longer (their objects leave the graph as deleted).
func (c *Controller) follow(ctx context.Context) {
	current := map[string]*Resource{}
	for i := range c.resources {
		current[c.resources[i].Name] = &c.resources[i]
	}
	if c.more != nil {
		for _, r := range c.more() {
			current[r.Name] = &r
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, f := range c.following {
		if r, ok := current[name]; ok && r.Store == f.resource.Store {
			continue
		}
		f.stop()
		delete(c.following, name)
		for uid, n := range c.graph.nodes {
			if n.resource == f.resource {
				c.removeLocked(uid)
			}
		}
	}
	for name, r := range current {
		if c.following[name] != nil {
			continue
		}
		fctx, stop := context.WithCancel(ctx)
		f := &follower{resource: r, stop: stop, done: make(chan struct{})}
		c.following[name] = f
		go func() {
			defer close(f.done)
			c.runFollower(fctx, f)
		}()
	}
}

// synced reports whether the first lists of every followed resource are
// in: until then an owner missing from the graph may just not be listed
// yet.
func (c *Controller) syncedLocked() bool {
	for _, f := range c.following {
		if !f.synced {
			return false
		}
	}
	return true
}

func (c *Controller) enqueueLocked(uid types.UID) {
	c.queue[uid] = true
	c.wake.Notify()
}

// work processes the queued objects once the graph is complete; those
// that fail stay queued for the next round.
func (c *Controller) work(ctx context.Context) {
	c.mu.Lock()
	if !c.syncedLocked() {
		c.mu.Unlock()
		return
	}
	uids := make([]types.UID, 0, len(c.queue))
	for uid := range c.queue {
		uids = append(uids, uid)
	}
	clear(c.queue)
	c.mu.Unlock()
	for _, uid := range uids {
		if ctx.Err() != nil {
			return
		}
		if err := c.process(ctx, uid); err != nil {
			slog.Warn("garbage collector: will retry", "uid", uid, "error", err)
			c.mu.Lock()
			c.queue[uid] = true
			c.mu.Unlock()
		}
	}
}
