// Package autoregister keeps the APIServices of the group versions the
// server serves itself, as kube-aggregator's autoregister controller
// does for kube-apiserver: one Local APIService (no service) per group
// version, named "<version>.<group>", with kube's priorities.
//
// Two kinds are kept, told apart by the label
// kube-aggregator.kubernetes.io/automanaged:
//
//   - "onstart" (AddOnStart: the built-in groups, given before Run): on the
//     first pass after the server starts, created when missing, their
//     spec restored, and those left from an earlier run whose group
//     version is no longer served deleted; after that a user may change
//     or delete them.
//   - "true" (AddGroupVersion / RemoveGroupVersion, the Registration a
//     CRD controller calls as kube's crdregistration does): kept for as
//     long as they are registered, recreated and restored on every change,
//     deleted when removed.
//
// An APIService without the label (a user's) is never touched. The
// controller calls registry verbs, as the namespace controller does.
package autoregister

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ManagedLabel marks the APIServices the controller keeps; its values
// are ManageOnStart and ManageContinuously.
const (
	ManagedLabel        = "kube-aggregator.kubernetes.io/automanaged"
	ManageOnStart       = "onstart"
	ManageContinuously  = "true"
	manager             = "kube-apiserver"
	defaultRetryBackoff = time.Second
	// workers is how many APIServices are synced at once.
	workers = 5
)

// Registration is what a controller of custom resources (CRDs) calls to
// have the APIService of a group version it serves kept, and removed
// when it no longer serves it (kube's crdregistration: AddGroupVersion
// with CustomResourcePriority).
type Registration interface {
	AddGroupVersion(gv schema.GroupVersion, p Priority)
	RemoveGroupVersion(gv schema.GroupVersion)
}

var _ Registration = (*Controller)(nil)

// Storage is what the controller needs of the apiservices storage.
type Storage interface {
	rest.Getter
	rest.Lister
	rest.Creater
	rest.Updater
	rest.GracefulDeleter
	rest.Watcher
}

// Controller keeps the automanaged APIServices.
type Controller struct {
	storage Storage
	writer  *fieldmanager.Writer
	retry   time.Duration

	mu sync.Mutex
	// desired are the APIServices to keep, by name, labelled.
	desired map[string]*apiregistrationv1.APIService
	// onStart are the names given to AddOnStart, which readiness waits
	// for.
	onStart []string
	// synced are the names synced once since the start: an onstart
	// APIService is left alone afterwards.
	synced map[string]bool
	// atStart are the names that existed when Run started (nil until
	// the first list): only those may be onstart leftovers to delete.
	atStart map[string]bool
	// pending are the names to sync next.
	pending map[string]bool
	wake    queue.Signal
}

// New returns a controller writing through storage.
func New(storage Storage) *Controller {
	return &Controller{
		storage: storage,
		writer:  fieldmanager.NewWriter(storage, apiregistrationv1.SchemeGroupVersion.WithKind("APIService"), "", manager),
		retry:   defaultRetryBackoff,
		desired: map[string]*apiregistrationv1.APIService{},
		synced:  map[string]bool{},
		pending: map[string]bool{},
		wake:    queue.NewSignal(),
	}
}

// Name is the APIService name of gv: "v1." for the legacy group.
func Name(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// AddOnStart registers gv, a built-in group version, to be ensured on
// start (call it before Run).
func (c *Controller) AddOnStart(gv schema.GroupVersion, p Priority) {
	c.add(gv, p, ManageOnStart)
	c.mu.Lock()
	c.onStart = append(c.onStart, Name(gv))
	c.mu.Unlock()
}

// AddGroupVersion implements Registration: gv's APIService is kept until
// RemoveGroupVersion.
func (c *Controller) AddGroupVersion(gv schema.GroupVersion, p Priority) {
	c.add(gv, p, ManageContinuously)
}

// RemoveGroupVersion implements Registration: gv's APIService, if kept,
// is deleted.
func (c *Controller) RemoveGroupVersion(gv schema.GroupVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.desired, Name(gv))
	c.enqueueLocked(Name(gv))
}

func (c *Controller) add(gv schema.GroupVersion, p Priority, how string) {
	s := &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: Name(gv), Labels: map[string]string{ManagedLabel: how}},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.Group, VersionPriority: p.Version,
		},
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.desired[s.Name] = s
	c.enqueueLocked(s.Name)
}

// Ready reports whether every APIService given to AddOnStart has been
// ensured (kube's autoregister-completion check).
func (c *Controller) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, name := range c.onStart {
		if !c.synced[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing APIService: %v", missing)
	}
	return nil
}

// Run works until ctx ends. The work starts after the first list: only
// the APIServices there are at start may be onstart leftovers to delete.
func (c *Controller) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	loop := follow.New(follow.Config{
		Name: "autoregister: APIServices", Source: c.storage,
		Handler: follow.Objects[*apiregistrationv1.APIService]{
			New:   func() *apiregistrationv1.APIService { return &apiregistrationv1.APIService{} },
			List:  c.listed,
			Event: func(_ watch.EventType, s *apiregistrationv1.APIService) { c.enqueue(s.Name) },
		},
	})
	var wg sync.WaitGroup
	wg.Go(func() { loop.Run(ctx) })
	if follow.WaitSynced(ctx, loop) {
		c.work(ctx)
	}
	wg.Wait()
}

// listed queues every APIService listed; the first list records those
// there are at start.
func (c *Controller) listed(list []*apiregistrationv1.APIService, _ int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.atStart == nil
	if first {
		c.atStart = map[string]bool{}
	}
	for _, s := range list {
		if first {
			c.atStart[s.Name] = true
		}
		c.enqueueLocked(s.Name)
	}
}

func (c *Controller) enqueue(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.enqueueLocked(name)
}

func (c *Controller) enqueueLocked(name string) {
	c.pending[name] = true
	c.wake.Notify()
}

// work syncs the pending names as they come, several at once (kube's
// controller runs 5 workers: at start, every served group version is
// written); a name that fails is tried again after the retry interval.
func (c *Controller) work(ctx context.Context) {
	for c.wake.Wait(ctx) {
		c.mu.Lock()
		names := slices.Sorted(maps.Keys(c.pending))
		clear(c.pending)
		c.mu.Unlock()
		var failed atomic.Bool
		var wg sync.WaitGroup
		slots := make(chan struct{}, workers)
		for _, name := range names {
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				if err := c.sync(ctx, name); err != nil && ctx.Err() == nil {
					slog.Warn("autoregister: syncing APIService", "name", name, "error", err)
					failed.Store(true)
					c.enqueue(name)
				}
			})
		}
		wg.Wait()
		if failed.Load() && !backoff.Wait(ctx, c.retry) {
			return
		}
	}
}

// sync brings the APIService name to what is desired of it, as kube's
// autoregister controller does.
func (c *Controller) sync(ctx context.Context, name string) error {
	c.mu.Lock()
	desired := c.desired[name]
	synced, atStart := c.synced[name], c.atStart[name]
	c.mu.Unlock()

	current, err := c.get(ctx, name)
	if err != nil {
		return err
	}
	if err := c.reconcile(ctx, desired, current, synced, atStart); err != nil {
		return err
	}
	c.mu.Lock()
	c.synced[name] = true
	c.mu.Unlock()
	return nil
}

func (c *Controller) reconcile(ctx context.Context, desired, current *apiregistrationv1.APIService, synced, atStart bool) error {
	switch {
	case current == nil && desired == nil:
		return nil
	case managed(desired) == ManageOnStart && synced:
		// Ensured once: the user may have changed or deleted it since.
		return nil
	case current == nil:
		_, err := c.writer.Create(ctx, desired.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	case managed(current) == "":
		return nil // a user's
	case managed(current) == ManageOnStart && (!atStart || synced):
		return nil
	case desired == nil:
		uid := current.UID
		_, _, err := c.storage.Delete(ctx, current.Name, nil, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	case apiequality.Semantic.DeepEqual(current.Spec, desired.Spec):
		return nil
	}
	updated := current.DeepCopy()
	updated.Spec = desired.Spec
	_, err := c.writer.Update(ctx, updated)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // the change that caused this queues the name again
	}
	return err
}

// get returns the APIService name, or nil when there is none.
func (c *Controller) get(ctx context.Context, name string) (*apiregistrationv1.APIService, error) {
	obj, err := c.storage.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return obj.(*apiregistrationv1.APIService), nil
}

// managed is the automanaged label of s ("" for nil or a user's).
func managed(s *apiregistrationv1.APIService) string {
	if s == nil {
		return ""
	}
	switch how := s.Labels[ManagedLabel]; how {
	case ManageOnStart, ManageContinuously:
		return how
	}
	return ""
}
