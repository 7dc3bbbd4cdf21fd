// Package crd runs what kube-apiserver's apiextensions controllers do for
// CustomResourceDefinitions, in one loop over the definitions: it grants
// each definition its names (NamesAccepted, with kube's conflict rules
// within a group), has the server serve its custom resources (routes,
// discovery, OpenAPI) and then establishes it (Established), serves it
// anew when it changes, and when it is deleted deletes its custom
// resources before letting it go (the customresourcecleanup finalizer).
//
// It calls the registry's verbs (no HTTP), as the namespace controller
// does, and hands the server what to serve through Server:
// cmd -> controllers -> registry.
package crd

import (
	"context"
	"crypto/x509"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/autoregister"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/apiextensions/customresource"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/webhookclient"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Definitions is what the controller needs of the CRD storage.
type Definitions interface {
	rest.Getter
	rest.Lister
	rest.Watcher
}

// Server serves custom resources (the apiserver's routes, discovery and
// OpenAPI documents).
type Server interface {
	// ServeCustomResources serves what the definition name serves, in
	// place of what it served before.
	ServeCustomResources(name string, served *customresource.Served) error
	// RemoveCustomResources stops serving what name served.
	RemoveCustomResources(name string)
}

// Config is what the controller works with.
type Config struct {
	Definitions Definitions
	// Status is customresourcedefinitions/status.
	Status rest.Updater
	Server Server
	// Storage gives each custom resource its storage (the key prefix
	// /registry/<group>/<plural>, its watch cache).
	Storage generic.RESTOptionsGetter
	// Services finds the conversion webhooks served by services.
	Services webhookclient.ServiceResolver
	// APIServices, when set, keeps an APIService for every group version
	// a definition serves (kube's crdregistration controller).
	APIServices autoregister.Registration
}

// Controller keeps the definitions' status and serves their custom
// resources.
type Controller struct {
	definitions Definitions
	status      rest.Updater // customresourcedefinitions/status
	server      Server
	storage     generic.RESTOptionsGetter
	services    webhookclient.ServiceResolver
	apiServices autoregister.Registration
	// retry is how long a definition whose sync failed waits before the
	// next attempt.
	retry time.Duration

	mu sync.Mutex
	// known is the latest state seen of every definition (the watch's, or
	// the controller's own status write when newer): the names a group's
	// definitions hold are read from it.
	known   map[string]*apiextensionsv1.CustomResourceDefinition
	pending map[string]bool
	// failed are queued again on the next tick.
	failed map[string]bool
	wake   queue.Signal
	// registered are the group versions given to apiServices.
	registered map[schema.GroupVersion]bool
	// definitionsLoop follows the definitions; it synced once they have
	// been listed (and their group versions registered).
	definitionsLoop *follow.Loop

	// served is what each definition serves; only the worker touches
	// it, and publishes a copy in servedNow for others. retired are the
	// stores replaced, destroyed after a grace.
	served    map[string]*servedDefinition
	servedNow atomic.Pointer[[]*customresource.Served]
	retired   sync.WaitGroup
}

// Listed is closed once the definitions have been listed: the APIServices
// of the group versions they serve are registered by then.
func (c *Controller) Listed() <-chan struct{} { return c.definitionsLoop.Synced() }

// Served returns what the definitions serve now.
func (c *Controller) Served() []*customresource.Served {
	if p := c.servedNow.Load(); p != nil {
		return *p
	}
	return nil
}

// publishServed makes what c.served holds what Served returns.
func (c *Controller) publishServed() {
	out := make([]*customresource.Served, 0, len(c.served))
	for _, s := range c.served {
		out = append(out, s.served)
	}
	c.servedNow.Store(&out)
}

// New returns a controller working with cfg.
func New(cfg Config) *Controller {
	c := &Controller{
		definitions: cfg.Definitions, status: cfg.Status, server: cfg.Server, storage: cfg.Storage, services: cfg.Services,
		apiServices: cfg.APIServices, retry: time.Second,
		known: map[string]*apiextensionsv1.CustomResourceDefinition{}, pending: map[string]bool{}, failed: map[string]bool{},
		registered: map[schema.GroupVersion]bool{},
		wake:       queue.NewSignal(), served: map[string]*servedDefinition{},
	}
	c.definitionsLoop = follow.New(follow.Config{
		Name: "crd controller: definitions", Source: cfg.Definitions,
		Handler: follow.Objects[*apiextensionsv1.CustomResourceDefinition]{
			New:   func() *apiextensionsv1.CustomResourceDefinition { return &apiextensionsv1.CustomResourceDefinition{} },
			List:  c.replaceKnown,
			Event: c.observe,
		},
	})
	return c
}

// Run works until ctx ends: it follows the definitions (a list, then a
// watch, again after a failure) and syncs each one that changes.
func (c *Controller) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	var wg sync.WaitGroup
	wg.Go(func() { c.work(ctx) })
	c.definitionsLoop.Run(ctx)
	wg.Wait()
	for name := range c.served {
		c.unserve(ctx, name)
	}
	c.retired.Wait()
}

// replaceKnown makes a list of the definitions the known ones, and queues
// every one, and those gone since the last list or event.
func (c *Controller) replaceKnown(list []*apiextensionsv1.CustomResourceDefinition, _ int64) {
	c.mu.Lock()
	c.known = queue.Relist(c.known, list, c.pending)
	c.registerGroupVersionsLocked()
	c.mu.Unlock()
	c.wake.Notify()
}

// observe records a state the watch reports and queues its definition.
func (c *Controller) observe(t watch.EventType, crd *apiextensionsv1.CustomResourceDefinition) {
	c.mu.Lock()
	if t == watch.Deleted {
		delete(c.known, crd.Name)
		c.registerGroupVersionsLocked()
	} else {
		c.rememberLocked(crd)
	}
	c.pending[crd.Name] = true
	c.mu.Unlock()
	c.wake.Notify()
}

// rememberLocked keeps crd unless a newer state is known already (the
// controller's own write may be seen before the watch reports it).
func (c *Controller) rememberLocked(crd *apiextensionsv1.CustomResourceDefinition) {
	if old := c.known[crd.Name]; old != nil && old.UID == crd.UID && revision(old) > revision(crd) {
		return
	}
	c.known[crd.Name] = crd
	c.registerGroupVersionsLocked()
}

// registerGroupVersionsLocked keeps the APIServices of the group versions
// the known definitions serve, as kube's crdregistration controller:
// every served version of every definition, whether established or
// terminating, until no definition serves it.
func (c *Controller) registerGroupVersionsLocked() {
	if c.apiServices == nil {
		return
	}
	served := map[schema.GroupVersion]bool{}
	for _, crd := range c.known {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served[schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}] = true
			}
		}
	}
	for gv := range served {
		if !c.registered[gv] {
			c.apiServices.AddGroupVersion(gv, autoregister.CustomResourcePriority)
		}
	}
	for gv := range c.registered {
		if !served[gv] {
			c.apiServices.RemoveGroupVersion(gv)
		}
	}
	c.registered = served
}

func revision(crd *apiextensionsv1.CustomResourceDefinition) int64 {
	rv, _ := storage.ParseResourceVersion(crd.ResourceVersion)
	return rv
}

// enqueueGroup queues every known definition of group but except, whose
// names may have been freed.
func (c *Controller) enqueueGroup(group, except string) {
	c.mu.Lock()
	for name, crd := range c.known {
		if crd.Spec.Group == group && name != except {
			c.pending[name] = true
		}
	}
	c.mu.Unlock()
	c.wake.Notify()
}

// groupDefinitions returns the known definitions of group.
func (c *Controller) groupDefinitions(group string) []*apiextensionsv1.CustomResourceDefinition {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range c.known {
		if crd.Spec.Group == group {
			out = append(out, crd)
		}
	}
	return out
}

// work syncs queued definitions, one at a time (granting names is not
// safe to run concurrently); those that fail are tried again after the
// retry period.
func (c *Controller) work(ctx context.Context) {
	c.wake.Every(ctx, c.retry, func(ticked bool) {
		if ticked {
			c.requeueFailed()
		}
		for {
			name, ok := c.next()
			if !ok {
				return
			}
			if err := c.sync(ctx, name); err != nil && ctx.Err() == nil {
				slog.Warn("crd controller: syncing a definition", "name", name, "error", err)
				c.retryLater(name)
			}
		}
	})
}

// retryLater queues name again on the next tick: a failing definition
// does not spin.
func (c *Controller) retryLater(name string) {
	c.mu.Lock()
	c.failed[name] = true
	c.mu.Unlock()
}

// requeueFailed queues the definitions whose last sync failed.
func (c *Controller) requeueFailed() {
	c.mu.Lock()
	for name := range c.failed {
		c.pending[name] = true
	}
	clear(c.failed)
	c.mu.Unlock()
}

// next takes a queued name.
func (c *Controller) next() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.pending {
		delete(c.pending, name)
		return name, true
	}
	return "", false
}

// sync brings the status of one definition up to date.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, err := c.definitions.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		c.forget(ctx, name)
		return nil
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	c.mu.Lock()
	c.rememberLocked(crd)
	c.mu.Unlock()
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, crd)
	}
	return c.syncNames(ctx, crd)
}

// forget drops a definition that is gone: what it served goes, and its
// names are free for its group's others.
func (c *Controller) forget(ctx context.Context, name string) {
	c.unserve(ctx, name)
	c.mu.Lock()
	crd := c.known[name]
	delete(c.known, name)
	c.registerGroupVersionsLocked()
	c.mu.Unlock()
	if crd != nil {
		c.enqueueGroup(crd.Spec.Group, name)
	}
}

// syncNames grants crd its names and establishes it, writing its status
// when that changes anything.
func (c *Controller) syncNames(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	names, namesCond := acceptNames(crd, newGroupNames(c.groupDefinitions(crd.Spec.Group)))
	namesAccepted := namesCond.Status == apiextensionsv1.ConditionTrue
	// As kube: served once its names are accepted, and (under the names
	// it holds) as long as it is established. Served before Established
	// is written: a client that sees it established can use it at once.
	if namesAccepted || apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		toServe := crd.DeepCopy()
		toServe.Status.AcceptedNames = names
		if err := c.serve(ctx, toServe); err != nil {
			return err
		}
	}
	established := establishedCondition(crd, namesAccepted)
	if equality.Semantic.DeepEqual(crd.Status.AcceptedNames, names) &&
		apiextensionshelpers.IsCRDConditionEquivalent(&namesCond, apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted)) &&
		apiextensionshelpers.IsCRDConditionEquivalent(&established, apiextensionshelpers.FindCRDCondition(crd, apiextensionsv1.Established)) {
		return nil
	}
	update := crd.DeepCopy()
	update.Status.AcceptedNames = names
	apiextensionshelpers.SetCRDCondition(update, namesCond)
	apiextensionshelpers.SetCRDCondition(update, established)
	if _, err := c.updateStatus(ctx, update); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(crd.Status.AcceptedNames, names) {
		c.enqueueGroup(crd.Spec.Group, crd.Name) // names may have been freed
	}
	return nil
}

// updateStatus writes crd's status and returns the definition written.
// A conflict or a missing definition is no error, and returns nil: the
// watch reports the newer state, which is synced again.
func (c *Controller) updateStatus(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	out, _, err := c.status.Update(ctx, crd.Name, &rest.DefaultUpdatedObjectInfo{Obj: crd}, nil, nil, false, &metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	written := out.(*apiextensionsv1.CustomResourceDefinition)
	c.mu.Lock()
	c.rememberLocked(written)
	c.mu.Unlock()
	return written, nil
}

// invalidCABundle reports a conversion webhook whose caBundle holds no
// certificate (kube establishes no such definition).
func invalidCABundle(crd *apiextensionsv1.CustomResourceDefinition) bool {
	conv := crd.Spec.Conversion
	if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || len(conv.Webhook.ClientConfig.CABundle) == 0 {
		return false
	}
	return !x509.NewCertPool().AppendCertsFromPEM(conv.Webhook.ClientConfig.CABundle)
}
