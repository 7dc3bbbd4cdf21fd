package follow_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/cacher"
	"github.com/miniapiserver/miniapiserver/pkg/registry/follow"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func ignoredGoroutines() []goleak.Option { return etcdtest.IgnoredGoroutines() }

// fixture is a store of ConfigMaps over a real embedded etcd, raw or
// behind the watch cache, and the revisions of the writes made to it.
type fixture struct {
	t     *testing.T
	etcd  *etcdtest.Etcd
	store *generic.Store

	mu  sync.Mutex
	rvs map[string]int64 // name -> revision of its last write
}

var configMaps = generic.Resource{
	Name: "configmaps", Singular: "configmap", Kind: "ConfigMap", Namespaced: true,
	New:      func() runtime.Object { return &corev1.ConfigMap{} },
	NewList:  func() runtime.Object { return &corev1.ConfigMapList{} },
	Strategy: generic.BaseStrategy{Namespaced: true},
}

type optionsGetter struct {
	factory   storage.Factory
	decorator storage.Decorator
}

func (g optionsGetter) GetRESTOptions(gr schema.GroupResource) (generic.RESTOptions, error) {
	return generic.RESTOptions{StorageFactory: g.factory, Decorator: g.decorator, ResourcePrefix: "/registry/" + gr.Resource}, nil
}

// newFixture starts an etcd and a ConfigMaps store over it; cached puts
// it behind a watch cache whose history holds capacity events (<= 0: as
// it sizes itself).
func newFixture(t *testing.T, cached bool, capacity int) *fixture {
	t.Helper()
	etcd := etcdtest.Start(t)
	decorator := storage.Decorator(generic.UndecoratedStorage)
	if cached {
		decorator = cacher.StorageWithCacher(cacher.Config{Capacity: capacity})
	}
	info, err := generic.BuildGroup(corev1.SchemeGroupVersion, optionsGetter{etcd3.NewFactory(etcd.Client), decorator}, configMaps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(info.Destroy)
	store := info.VersionedResourcesStorageMap["v1"]["configmaps"].(*generic.Store)
	return &fixture{t: t, etcd: etcd, store: store, rvs: map[string]int64{}}
}

// start runs a loop over the fixture's store with h until the test ends
// (the loop has returned by then).
func (f *fixture) start(t *testing.T, h follow.Handler) *follow.Loop {
	t.Helper()
	loop := follow.New(follow.Config{Name: t.Name(), Source: f.store, Handler: h, Backoff: fast})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		loop.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return loop
}

func (f *fixture) ctx() context.Context {
	return request.WithNamespace(context.Background(), "default")
}

func configMap(name, v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"v": v}}
}

func (f *fixture) create(name, v string) {
	f.t.Helper()
	out, err := f.store.Create(f.ctx(), configMap(name, v), nil, &metav1.CreateOptions{})
	f.written(name, out, err)
}

func (f *fixture) update(name, v string) {
	f.t.Helper()
	out, _, err := f.store.Update(f.ctx(), name, &rest.DefaultUpdatedObjectInfo{Obj: configMap(name, v)}, nil, nil, false, &metav1.UpdateOptions{})
	f.written(name, out, err)
}

func (f *fixture) delete(name string) {
	f.t.Helper()
	if _, _, err := f.store.Delete(f.ctx(), name, nil, &metav1.DeleteOptions{}); err != nil {
		f.t.Fatalf("delete %s: %v", name, err)
	}
	f.mu.Lock()
	delete(f.rvs, name)
	f.mu.Unlock()
}

func (f *fixture) written(name string, out runtime.Object, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("write %s: %v", name, err)
	}
	rv, err := storage.ParseResourceVersion(out.(*corev1.ConfigMap).ResourceVersion)
	if err != nil {
		f.t.Fatal(err)
	}
	f.mu.Lock()
	f.rvs[name] = rv
	f.mu.Unlock()
}

// rv is the revision of name's last write.
func (f *fixture) rv(name string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rvs[name]
}

// recorder is a Handler that keeps what a consumer would (each object's
// revision, by name) and records every call. It checks that each round
// hands on events in revision order, after the list's revision.
type recorder struct {
	// gate, when set, holds the first list until it is closed.
	gate chan struct{}
	// before, when set, is called before each event is taken; an error
	// refuses the event.
	before func() error

	mu         sync.Mutex
	lists      []listed
	events     []string // "TYPE name"
	state      map[string]int64
	last       int64 // revision of the round's last list or event
	outOfOrder []string
}

type listed struct {
	names []string
	rv    int64
}

func newRecorder() *recorder { return &recorder{state: map[string]int64{}} }

func (r *recorder) OnList(items []*storage.Object, rv int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := listed{rv: rv}
	clear(r.state)
	for _, item := range items {
		name := nameOf(item)
		l.names = append(l.names, name)
		r.state[name] = item.ResourceVersion
	}
	r.lists = append(r.lists, l)
	r.last = rv
	if r.gate != nil && len(r.lists) == 1 {
		r.mu.Unlock()
		<-r.gate
		r.mu.Lock()
	}
	return nil
}

func (r *recorder) OnEvent(ev storage.Event) error {
	if r.before != nil {
		if err := r.before(); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	name, rv := nameOf(ev.Object), ev.Object.ResourceVersion
	if rv <= r.last {
		r.outOfOrder = append(r.outOfOrder, fmt.Sprintf("%s %s at %d after %d", ev.Type, name, rv, r.last))
	}
	r.last = rv
	r.events = append(r.events, fmt.Sprintf("%s %s", ev.Type, name))
	if ev.Type == watch.Deleted {
		delete(r.state, name)
	} else {
		r.state[name] = rv
	}
	return nil
}

func (r *recorder) listCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lists)
}

func (r *recorder) eventCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func nameOf(o *storage.Object) string {
	cm := &corev1.ConfigMap{}
	if err := o.Decode(cm); err != nil {
		panic(err)
	}
	return cm.Name
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logs are the records logged during a test, with their error.
type logs struct {
	mu      sync.Mutex
	records []string
	errs    []error
}

// captureLogs sends the default logger's records to the returned logs
// until the test ends.
func captureLogs(t *testing.T) *logs {
	l := &logs{}
	old := slog.Default()
	slog.SetDefault(slog.New(l))
	t.Cleanup(func() { slog.SetDefault(old) })
	return l
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }

func (l *logs) Handle(_ context.Context, rec slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec.Message)
	if !strings.HasPrefix(rec.Message, "follow: ") {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "error" {
			l.errs = append(l.errs, err)
		}
		return true
	})
	return nil
}

// relistedAfter reports whether a loop logged a relist after an error
// that is matches.
func (l *logs) relistedAfter(is func(error) bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.errs, is)
}

func (l *logs) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.records)
}
