package policy

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Storage is what a source reads policies or bindings from: this
// server's own storage of the resource.
type Storage interface {
	rest.Storage
	rest.Lister
	rest.Watcher
}

// compiled is a policy or a binding as a source keeps it: compiled once
// per generation.
type compiled interface {
	name() string
	// policyName is the policy a binding binds ("" for a policy).
	policyName() string
}

// hook is a policy with its bindings, in name order.
type hook[P, B compiled] struct {
	policy   P
	bindings []B
}

// source follows the policies and bindings of one kind through watches
// of this server's storage and keeps the hooks to run, rebuilt on every
// change and read without locks.
type source[P, B compiled] struct {
	policies, bindings Storage
	compilePolicy      func(runtime.Object) P
	compileBinding     func(runtime.Object) B

	mu      sync.Mutex
	state   [2]map[string]*entry // policies, bindings by name
	hooks   atomic.Pointer[[]hook[P, B]]
	synced  chan struct{}
	pending sync.WaitGroup // initial lists not yet done
}

type entry struct {
	uid        types.UID
	generation int64
	compiled   compiled
}

const (
	policies = 0
	bindings = 1
)

func newSource[P, B compiled](pol, bind Storage, compilePolicy func(runtime.Object) P, compileBinding func(runtime.Object) B) *source[P, B] {
	s := &source[P, B]{policies: pol, bindings: bind, compilePolicy: compilePolicy, compileBinding: compileBinding,
		state: [2]map[string]*entry{{}, {}}, synced: make(chan struct{})}
	s.hooks.Store(&[]hook[P, B]{})
	return s
}

// run follows both resources until ctx ends.
func (s *source[P, B]) run(ctx context.Context) {
	s.pending.Add(2)
	go func() {
		s.pending.Wait()
		close(s.synced)
	}()
	var wg sync.WaitGroup
	for which, st := range []Storage{s.policies, s.bindings} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.follow(ctx, which, st)
		}()
	}
	wg.Wait()
}

// waitForSync reports whether both initial lists are in, waiting for
// them at most timeout.
func (s *source[P, B]) waitForSync(ctx context.Context, timeout time.Duration) bool {
	select {
	case <-s.synced:
		return true
	default:
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.synced:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// follow lists then watches one resource, listing again when the watch
// ends, until ctx ends.
func (s *source[P, B]) follow(ctx context.Context, which int, st Storage) {
	ctx = request.WithNamespace(ctx, "")
	first := true
	for ctx.Err() == nil {
		rv, err := s.list(ctx, which, st)
		if err == nil {
			if first {
				first = false
				s.pending.Done()
			}
			err = s.watch(ctx, which, st, rv)
		}
		if ctx.Err() != nil {
			return
		}
		slog.Warn("admission policies: following the configuration", "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *source[P, B]) list(ctx context.Context, which int, st Storage) (string, error) {
	list, err := st.List(ctx, &metainternalversion.ListOptions{})
	if err != nil {
		return "", err
	}
	items, err := decodeAll(st, list.Items)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.state[which]
	s.state[which] = make(map[string]*entry, len(items))
	for _, obj := range items {
		s.putLocked(which, obj, old)
	}
	s.rebuildLocked()
	return strconv.FormatInt(list.ResourceVersion, 10), nil
}

// decodeAll decodes stored objects into st's type.
func decodeAll(st rest.Storage, items []*storage.Object) ([]runtime.Object, error) {
	out := make([]runtime.Object, len(items))
	for i, item := range items {
		out[i] = st.New()
		if err := item.Decode(out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *source[P, B]) watch(ctx context.Context, which int, st Storage, rv string) error {
	w, err := st.Watch(ctx, &metainternalversion.ListOptions{Watch: true, ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Error:
			return ev.Err
		case watch.Bookmark:
			continue
		}
		obj := st.New()
		if err := ev.Object.Decode(obj); err != nil {
			return err
		}
		s.mu.Lock()
		if ev.Type == watch.Deleted {
			if m, err := meta.Accessor(obj); err == nil {
				delete(s.state[which], m.GetName())
			}
		} else {
			s.putLocked(which, obj, s.state[which])
		}
		s.rebuildLocked()
		s.mu.Unlock()
	}
	return errors.New("watch ended")
}

// putLocked records obj, compiling it unless old holds the same
// generation of it.
func (s *source[P, B]) putLocked(which int, obj runtime.Object, old map[string]*entry) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	if e, ok := old[m.GetName()]; ok && e.uid == m.GetUID() && e.generation == m.GetGeneration() {
		s.state[which][m.GetName()] = e
		return
	}
	e := &entry{uid: m.GetUID(), generation: m.GetGeneration()}
	if which == policies {
		e.compiled = s.compilePolicy(obj)
	} else {
		e.compiled = s.compileBinding(obj)
	}
	s.state[which][m.GetName()] = e
}

// rebuildLocked publishes the policies that have bindings, with them, in
// name order.
func (s *source[P, B]) rebuildLocked() {
	bound := map[string][]B{}
	for _, e := range s.state[bindings] {
		b := e.compiled.(B)
		bound[b.policyName()] = append(bound[b.policyName()], b)
	}
	var names []string
	for name := range bound {
		if _, ok := s.state[policies][name]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	hooks := make([]hook[P, B], 0, len(names))
	for _, name := range names {
		bs := bound[name]
		sort.Slice(bs, func(i, j int) bool { return bs[i].name() < bs[j].name() })
		hooks = append(hooks, hook[P, B]{policy: s.state[policies][name].compiled.(P), bindings: bs})
	}
	s.hooks.Store(&hooks)
}
