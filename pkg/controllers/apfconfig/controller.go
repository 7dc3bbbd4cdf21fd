// Package apfconfig keeps the API Priority and Fairness configuration
// as kube-apiserver does: it creates kube's mandatory and suggested
// FlowSchemas and PriorityLevelConfigurations at startup and checks them
// every minute (mandatory ones are restored; a suggested one is left as
// a user changed it once its apf.kubernetes.io/autoupdate-spec annotation
// is false), and it keeps each FlowSchema's Dangling condition saying
// whether the priority level it names exists.
//
// It calls registry verbs, as the namespace controller does; nothing here
// enforces flow control: pkg/apiserver/apf does, following the same
// objects (apf.FollowConfiguration).
package apfconfig

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/queue"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// The managers kube's producer (the ensurer) and consumer (the status
// of flow schemas) write as.
const (
	producerManager = "api-priority-and-fairness-config-producer-v1"
	consumerManager = "api-priority-and-fairness-config-consumer-v1"
)

// Storage is what the controller needs of each resource's storage.
type Storage interface {
	rest.Getter
	rest.Lister
	rest.Creater
	rest.Updater
	rest.GracefulDeleter
	rest.Watcher
}

// Config names the storages the controller works on.
type Config struct {
	FlowSchemas      Storage
	FlowSchemaStatus rest.Updater // flowschemas/status
	PriorityLevels   Storage
	// EnsureInterval is how often the configuration is checked after the
	// first time (kube: a minute); Retry how soon a failed step is tried
	// again (kube: a second).
	EnsureInterval, Retry time.Duration
}

// Controller maintains the flow control configuration.
type Controller struct {
	cfg            Config
	flowSchemas    *configKind[*flowcontrolv1.FlowSchema]
	priorityLevels *configKind[*flowcontrolv1.PriorityLevelConfiguration]
	statusWriter   *fieldmanager.Writer

	ensured atomic.Bool
	wake    queue.Signal
}

// New returns a controller over cfg's storages.
func New(cfg Config) *Controller {
	if cfg.EnsureInterval == 0 {
		cfg.EnsureInterval = time.Minute
	}
	if cfg.Retry == 0 {
		cfg.Retry = time.Second
	}
	return &Controller{
		cfg: cfg,
		flowSchemas: newConfigKind(cfg.FlowSchemas, flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"),
			bootstrap.MandatoryFlowSchemas, bootstrap.SuggestedFlowSchemas, flowSchemaSpec),
		priorityLevels: newConfigKind(cfg.PriorityLevels, flowcontrolv1.SchemeGroupVersion.WithKind("PriorityLevelConfiguration"),
			bootstrap.MandatoryPriorityLevelConfigurations, bootstrap.SuggestedPriorityLevelConfigurations, priorityLevelSpec),
		statusWriter: fieldmanager.NewWriter(cfg.FlowSchemaStatus, flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"), "status", consumerManager),
		wake:         queue.NewSignal(),
	}
}

// Ensured reports whether the configuration was ensured once: kube's
// readiness waits for it (poststarthook/priority-and-fairness-config-producer).
func (c *Controller) Ensured() error {
	if !c.ensured.Load() {
		return errors.New("the flow control configuration is not ensured yet")
	}
	return nil
}

// Run works until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	// Every list and change wakes the status worker, which reads the
	// stores.
	var wg sync.WaitGroup
	if !apf.FollowConfiguration(ctx, &wg, "flow control bootstrap", c.cfg.FlowSchemas, c.cfg.PriorityLevels, c.wake.Notify) {
		return
	}
	wg.Go(func() { c.keepDangling(ctx) })
	c.keepEnsured(ctx)
	wg.Wait()
}

// keepEnsured ensures the configuration, every second until it first
// succeeds, then every EnsureInterval.
func (c *Controller) keepEnsured(ctx context.Context) {
	for ctx.Err() == nil {
		wait := c.cfg.EnsureInterval
		if err := c.ensure(ctx); err != nil {
			if ctx.Err() == nil {
				slog.Warn("flow control: ensuring the bootstrap configuration", "error", err)
			}
			if !c.ensured.Load() {
				wait = c.cfg.Retry
			}
		} else {
			c.ensured.Store(true)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// ensure is kube's ensurer: suggested objects, then mandatory ones, then
// the removal of objects kube no longer suggests.
func (c *Controller) ensure(ctx context.Context) error {
	for _, step := range []func(context.Context) error{
		func(ctx context.Context) error { return c.priorityLevels.ensure(ctx, false) },
		func(ctx context.Context) error { return c.flowSchemas.ensure(ctx, false) },
		func(ctx context.Context) error { return c.priorityLevels.ensure(ctx, true) },
		func(ctx context.Context) error { return c.flowSchemas.ensure(ctx, true) },
		c.flowSchemas.removeUnwanted,
		c.priorityLevels.removeUnwanted,
	} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}
