package admissionpolicy

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
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

	mu    sync.Mutex
	state [2]map[string]*entry // policies, bindings by name
	hooks atomic.Pointer[[]hook[P, B]]
	// synced is closed once both resources were listed.
	synced chan struct{}
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
	var loops []*follow.Loop
	for which, st := range []Storage{s.policies, s.bindings} {
		loops = append(loops, follow.New(follow.Config{
			Name: "admission policies: " + [...]string{"policies", "bindings"}[which], Source: st,
			Handler: follow.Objects[runtime.Object]{
				New:   st.New,
				List:  func(objs []runtime.Object, _ int64) { s.replace(which, objs) },
				Event: func(t watch.EventType, obj runtime.Object) { s.apply(which, t, obj) },
			},
		}))
	}
	follow.RunAll(ctx, func() { close(s.synced) }, loops...)
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

// replace makes a list's objects those of which, keeping what was
// compiled of the ones that did not change.
func (s *source[P, B]) replace(which int, objs []runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.state[which]
	s.state[which] = make(map[string]*entry, len(objs))
	for _, obj := range objs {
		s.putLocked(which, obj, old)
	}
	s.rebuildLocked()
}

// apply records one change of which.
func (s *source[P, B]) apply(which int, t watch.EventType, obj runtime.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == watch.Deleted {
		if m, err := meta.Accessor(obj); err == nil {
			delete(s.state[which], m.GetName())
		}
	} else {
		s.putLocked(which, obj, s.state[which])
	}
	s.rebuildLocked()
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
