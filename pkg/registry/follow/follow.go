package follow

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/backoff"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Source is a store a Loop follows: a resource's registry store (read
// across all namespaces).
type Source interface {
	rest.Lister
	rest.Watcher
}

// Handler receives what a Loop reads, in order, from the Loop's
// goroutine: a list, the events after it, then (after the watch ended)
// another list, and so on. An error from either method ends the round:
// the Loop lists again after a backoff.
type Handler interface {
	// OnList gets the whole content of the store (sorted by key) and the
	// revision it was read at: what an earlier list or event said of an
	// object not among items is out of date (the object is gone).
	OnList(items []*storage.Object, rv int64) error
	// OnEvent gets one change after the last list; ev.Type is ADDED,
	// MODIFIED or DELETED.
	OnEvent(ev storage.Event) error
}

// DefaultBackoff paces the lists after failures: from 100 ms (the watch
// cache usually needs only to catch up) doubling to 10 s, starting over
// after a round that lasted 30 s.
var DefaultBackoff = backoff.Policy{Initial: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: 0.2, Reset: 30 * time.Second}

// Config is what a Loop follows and whom it tells.
type Config struct {
	// Name says in logs what is followed ("crd controller: definitions").
	Name    string
	Source  Source
	Handler Handler
	// Backoff paces the lists after failures; zero: DefaultBackoff.
	Backoff backoff.Policy
}

// Loop follows one store. Run it once.
type Loop struct {
	cfg        Config
	synced     chan struct{}
	syncedOnce sync.Once
}

// New returns a Loop of cfg; it follows the store once Run is called.
func New(cfg Config) *Loop {
	if cfg.Backoff == (backoff.Policy{}) {
		cfg.Backoff = DefaultBackoff
	}
	return &Loop{cfg: cfg, synced: make(chan struct{})}
}

// Synced is closed once the handler took a first list without error.
func (l *Loop) Synced() <-chan struct{} { return l.synced }

// HasSynced reports whether Synced is closed.
func (l *Loop) HasSynced() bool {
	select {
	case <-l.synced:
		return true
	default:
		return false
	}
}

// WaitSynced waits until every loop synced, or ctx ends; it reports
// whether they all did (true, even when ctx has ended, once they have).
func WaitSynced(ctx context.Context, loops ...*Loop) bool {
	for _, l := range loops {
		if l.HasSynced() {
			continue
		}
		select {
		case <-l.synced:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// RunAll runs the loops until ctx ends, and returns once every one
// returned. synced, when not nil, is called once they all synced (not at
// all when ctx ends first).
func RunAll(ctx context.Context, synced func(), loops ...*Loop) {
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Go(func() { l.Run(ctx) })
	}
	if synced != nil && WaitSynced(ctx, loops...) {
		synced()
	}
	wg.Wait()
}

// Run follows the store until ctx ends, and returns once nothing of it
// runs (no watch left open, no handler call in progress). It waits for
// the store's readiness (a watch cache's first list) before its first
// list.
func (l *Loop) Run(ctx context.Context) {
	ctx = request.WithNamespace(ctx, "")
	if rest.WaitForStorageReadiness(ctx, l.cfg.Source) != nil {
		return
	}
	b := backoff.New(l.cfg.Backoff)
	for {
		start := time.Now()
		err := l.round(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := b.Next(time.Since(start))
		slog.Warn("follow: listing again", "what", l.cfg.Name, "error", err, "in", wait)
		if !backoff.Wait(ctx, wait) {
			return
		}
	}
}

// errWatchEnded is a watch that closed without saying why.
var errWatchEnded = errors.New("follow: watch ended")

// round lists, then hands on the watch's events until it ends.
func (l *Loop) round(ctx context.Context) error {
	list, err := l.cfg.Source.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return err
	}
	if err := l.cfg.Handler.OnList(list.Items, list.ResourceVersion); err != nil {
		return err
	}
	l.syncedOnce.Do(func() { close(l.synced) })

	w, err := l.cfg.Source.Watch(ctx, &metainternalversion.ListOptions{
		Watch: true, ResourceVersion: strconv.FormatInt(list.ResourceVersion, 10),
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errWatchEnded
			}
			switch ev.Type {
			case watch.Error:
				return ev.Err
			case watch.Added, watch.Modified, watch.Deleted:
				if err := l.cfg.Handler.OnEvent(ev); err != nil {
					return err
				}
			}
		}
	}
}
