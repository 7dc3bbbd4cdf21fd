// Package apf is API Priority and Fairness, kube-apiserver's flow
// control: each request is classified by the FlowSchemas into a priority
// level and a flow; each priority level has its seats (a share of the
// server's concurrency, lent and borrowed between levels) and queues
// that its flows are shuffle-sharded to and served from fairly
// (package queueset). The configuration is read, and followed, from the
// FlowSchemas and PriorityLevelConfigurations the registry stores;
// pkg/controllers/apfconfig keeps kube's bootstrap objects there.
//
// Layers: part of pkg/apiserver, a request filter in place of the plain
// in-flight limits; it reads the configuration through the registry's
// verbs (served from the watch cache) and the request's user and
// RequestInfo from the registry's request package.
package apf

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/apf/queueset"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Storage is what the controller reads of each configuration resource.
type Storage = follow.Source

// Config of a Controller.
type Config struct {
	FlowSchemas, PriorityLevels Storage
	// ServerConcurrencyLimit is the seats shared by all levels (kube:
	// --max-requests-inflight + --max-mutating-requests-inflight).
	ServerConcurrencyLimit int
	// DefaultWaitLimit is how long a request without a deadline (a
	// watch) may wait in a queue (kube: 15 s).
	DefaultWaitLimit time.Duration
	// BorrowingPeriod is how often the levels' limits are rebalanced
	// (kube: 10 s).
	BorrowingPeriod time.Duration
	// Retry is how soon a failed read of the configuration is retried.
	Retry time.Duration
	// Metrics is the server's registry, where the controller's metrics
	// are created (nil: registered nowhere).
	Metrics prometheus.Registerer
}

// Controller holds the flow control configuration and the state of every
// priority level. Its methods are safe for concurrent use.
type Controller struct {
	cfg     Config
	dropped *droppedTracker
	m       *metricSet

	mu sync.RWMutex
	// schemas are the flow schemas in matching order, each with its
	// level (dangling ones are left out).
	schemas []schemaState
	levels  map[string]*level
	// nominalSum is the sum of the levels' nominal limits.
	nominalSum int

	synced atomic.Bool
	wake   chan struct{}
}

type schemaState struct {
	fs    *flowcontrolv1.FlowSchema
	level *level
}

// New returns a controller that knows kube's mandatory configuration
// (exempt, catch-all) until Run reads the stored one.
func New(cfg Config) *Controller {
	if cfg.DefaultWaitLimit == 0 {
		cfg.DefaultWaitLimit = 15 * time.Second
	}
	if cfg.BorrowingPeriod == 0 {
		cfg.BorrowingPeriod = 10 * time.Second
	}
	if cfg.Retry == 0 {
		cfg.Retry = time.Second
	}
	c := &Controller{cfg: cfg, dropped: newDroppedTracker(), m: newMetrics(cfg.Metrics), levels: map[string]*level{}, wake: make(chan struct{}, 1)}
	c.apply(nil, nil)
	return c
}

// Synced reports whether the stored configuration was read once (kube's
// poststarthook/priority-and-fairness-filter).
func (c *Controller) Synced() error {
	if !c.synced.Load() {
		return errors.New("the flow control configuration is not read yet")
	}
	return nil
}

// Run follows the stored configuration and rebalances the levels'
// limits until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	// Every list and change wakes the worker, which reads both kinds.
	var wg sync.WaitGroup
	if !FollowConfiguration(ctx, &wg, "flow control", c.cfg.FlowSchemas, c.cfg.PriorityLevels, c.poke) {
		return
	}
	wg.Go(func() { c.rebalanceEvery(ctx) })
	c.poke()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-c.wake:
		}
		if err := c.sync(ctx); err != nil {
			if ctx.Err() == nil {
				slog.Warn("flow control: reading the configuration", "error", err)
				time.AfterFunc(c.cfg.Retry, c.poke)
			}
			continue
		}
		c.synced.Store(true)
	}
}

// FollowConfiguration waits until the storages of the flow schemas and
// the priority levels are ready, then follows both on a goroutine that
// wg waits for, calling changed on every list and change of either
// (name prefixes the loops' names in logs) until ctx ends. It reports
// false, having started nothing, when ctx ended first. The filter and
// pkg/controllers/apfconfig, which keeps the configuration, both re-read
// the whole configuration on any change.
func FollowConfiguration(ctx context.Context, wg *sync.WaitGroup, name string, flowSchemas, priorityLevels Storage, changed func()) bool {
	if rest.WaitForStorageReadiness(ctx, flowSchemas, priorityLevels) != nil {
		return false
	}
	wg.Go(func() {
		follow.RunAll(ctx, nil,
			follow.New(follow.Config{Name: name + ": flow schemas", Source: flowSchemas, Handler: follow.Changes(changed)}),
			follow.New(follow.Config{Name: name + ": priority levels", Source: priorityLevels, Handler: follow.Changes(changed)}))
	})
	return true
}

func (c *Controller) rebalanceEvery(ctx context.Context) {
	t := time.NewTicker(c.cfg.BorrowingPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.rebalance()
		}
	}
}

// sync reads both kinds and applies them.
func (c *Controller) sync(ctx context.Context) error {
	pls, err := list(ctx, c.cfg.PriorityLevels, func() *flowcontrolv1.PriorityLevelConfiguration { return new(flowcontrolv1.PriorityLevelConfiguration) })
	if err != nil {
		return err
	}
	fss, err := list(ctx, c.cfg.FlowSchemas, func() *flowcontrolv1.FlowSchema { return new(flowcontrolv1.FlowSchema) })
	if err != nil {
		return err
	}
	c.apply(fss, pls)
	return nil
}

func (c *Controller) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func list[T runtime.Object](ctx context.Context, s Storage, newObj func() T) ([]T, error) {
	res, err := s.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(res.Items))
	for _, item := range res.Items {
		obj := newObj()
		if err := item.Decode(obj); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// apply makes fss and pls the configuration, with kube's mandatory
// objects standing in for any missing (as kube's controller imagines
// them). Levels that stay keep their queues and what waits there;
// levels that go are dropped, and what they run or queue finishes on
// its own (kube keeps them quiescing until then; nothing new reaches
// them either way, since their schemas are dangling).
func (c *Controller) apply(fss []*flowcontrolv1.FlowSchema, pls []*flowcontrolv1.PriorityLevelConfiguration) {
	pls = withMandatory(pls, bootstrap.MandatoryPriorityLevelConfigurations, func(pl *flowcontrolv1.PriorityLevelConfiguration) string { return pl.Name })
	fss = withMandatory(fss, bootstrap.MandatoryFlowSchemas, func(fs *flowcontrolv1.FlowSchema) string { return fs.Name })

	c.mu.Lock()
	defer c.mu.Unlock()
	levels := c.configureLevelsLocked(pls)
	for name, lv := range c.levels {
		if levels[name] == nil {
			lv.forget(c.m)
		}
	}
	c.levels = levels

	slices.SortFunc(fss, func(a, b *flowcontrolv1.FlowSchema) int {
		if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
			return int(a.Spec.MatchingPrecedence) - int(b.Spec.MatchingPrecedence)
		}
		return strings.Compare(a.Name, b.Name)
	})
	c.schemas = c.schemas[:0:0]
	for _, fs := range fss {
		if lv := levels[fs.Spec.PriorityLevelConfiguration.Name]; lv != nil {
			c.schemas = append(c.schemas, schemaState{fs: fs, level: lv})
		}
	}
}

// withMandatory adds to objs the mandatory objects it lacks.
func withMandatory[T any](objs []T, mandatory []T, name func(T) string) []T {
	have := map[string]bool{}
	for _, o := range objs {
		have[name(o)] = true
	}
	out := slices.Clip(objs)
	for _, m := range mandatory {
		if !have[name(m)] {
			out = append(out, m)
		}
	}
	return out
}

// class is where a request goes: its flow schema, its level (and what
// the request needs of it, read under the controller's lock) and flow.
type class struct {
	fs       *flowcontrolv1.FlowSchema
	pl       *flowcontrolv1.PriorityLevelConfiguration
	lv       *level
	exempt   bool
	qs       *queueset.QueueSet
	maxSeats int
	flow     string
}

// classify finds the first flow schema (in matching order) that matches
// the request, its level, and the request's flow; the catch-all schema
// matches what no other does.
func (c *Controller) classify(u user.Info, info *request.Info) class {
	c.mu.RLock()
	defer c.mu.RUnlock()
	fs, lv := bootstrap.MandatoryFlowSchemaCatchAll, c.levels[flowcontrolv1.PriorityLevelConfigurationNameCatchAll]
	for _, s := range c.schemas {
		if matches(s.fs, u, info) {
			fs, lv = s.fs, s.level
			break
		}
	}
	// Without a match (a user's catch-all may match less than kube's),
	// kube serves the request as its catch-all.
	return class{fs: fs, pl: lv.pl, lv: lv, exempt: lv.exempt, qs: lv.qs, maxSeats: lv.maxSeats, flow: distinguisher(fs, u, info)}
}

// queueSetOf is the queuing configuration of a limited level (none for
// Reject).
func queueSetOf(pl *flowcontrolv1.PriorityLevelConfiguration) queueset.Config {
	if pl.Spec.Limited == nil || pl.Spec.Limited.LimitResponse.Type != flowcontrolv1.LimitResponseTypeQueue ||
		pl.Spec.Limited.LimitResponse.Queuing == nil {
		return queueset.Config{}
	}
	q := pl.Spec.Limited.LimitResponse.Queuing
	return queueset.Config{Queues: int(q.Queues), HandSize: int(q.HandSize), QueueLengthLimit: int(q.QueueLengthLimit)}
}
