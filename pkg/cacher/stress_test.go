package cacher_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
	"github.com/miniapiserver/miniapiserver/pkg/storage/storagetest"
)

// TestStress: concurrent writers and watchers started at many revisions,
// some with selectors; every watcher must receive exactly the events after
// its start revision that its selector sees, in revision order, as
// computed from etcd's own history. -short runs a smaller form.
func TestStress(t *testing.T) {
	ops, watchers := 20000, 100
	if testing.Short() {
		ops, watchers = 2000, 30
	}
	etcd := etcdtest.Start(t)
	cfg := storagetest.PodConfig()
	raw := etcd3.New(etcd.Client, cfg)
	c := newCacher(t, etcd, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	startRev, err := raw.CurrentResourceVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}

	const writers = 8
	queue := make(chan struct{}, ops)
	for range ops {
		queue <- struct{}{}
	}
	close(queue)
	var lastRev syncMax
	lastRev.set(startRev)
	var writing sync.WaitGroup
	for i := range writers {
		writing.Add(1)
		go func(seed uint64) {
			defer writing.Done()
			r := rand.New(rand.NewPCG(seed, 7))
			for range queue {
				rev, err := randomWrite(ctx, raw, cfg, r)
				if err != nil {
					t.Error(err)
					return
				}
				lastRev.set(rev)
			}
		}(uint64(i))
	}

	// Watchers start while the writes go on, each from the revision of a
	// recent write, with one of four selections.
	var ws []*recorder
	for i := range watchers {
		sel := storage.Everything
		key := cfg.ResourcePrefix
		switch i % 4 {
		case 1:
			sel = storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "a"}), Field: fields.Everything()}
		case 2:
			key += "/ns1"
		case 3:
			sel = storage.SelectionPredicate{Label: labels.Everything(), Field: fields.OneTermEqualSelector("spec.nodeName", "n1")}
		}
		sel.GetAttrs = storagetest.PodAttrs
		rec := &recorder{from: lastRev.get(), key: key, pred: sel}
		// A watcher ended for being too slow (a loaded machine, -race)
		// starts again from the last revision it got, as a client does;
		// what it receives must still be every change exactly once.
		rec.rewatch = func(from int64) (storage.Watcher, error) {
			return c.Watch(ctx, key, storage.ListOptions{ResourceVersion: strconv.FormatInt(from, 10), Recursive: true, Predicate: sel})
		}
		w, err := rec.rewatch(rec.from)
		if err != nil {
			t.Fatal(err)
		}
		// Half the watchers are read as the HTTP handler reads them
		// (pulled, live events converted in the reader's goroutine),
		// half from ResultChan.
		rec.start(w, i%2 == 0)
		ws = append(ws, rec)
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
	}
	writing.Wait()
	defer func() {
		restarts := 0
		for _, rec := range ws {
			rec.stop() // done already unless the test failed early
			restarts += rec.restarts
		}
		t.Logf("%d watchers, %d restarts of watchers ended as too slow", len(ws), restarts)
	}()
	if t.Failed() {
		return
	}
	history := etcdHistory(t, ctx, etcd.Client, cfg, startRev, lastRev.get())
	deadline := time.Now().Add(2 * time.Minute)
	for i, rec := range ws {
		want := expectedFor(history, rec.from, rec.key, rec.pred)
		for rec.count() < len(want) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		got := rec.stop()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("watcher %d (from %d, key %s, labels %q, fields %q): got %d events, want %d\n%s",
				i, rec.from, rec.key, rec.pred.Label, rec.pred.Field, len(got), len(want), firstDifference(got, want))
		}
	}
}

// recorder reads a watch into a list of "TYPE key rv" lines. With
// rewatch, a watch that ends by itself is started again from the last
// revision received.
type recorder struct {
	from    int64
	key     string
	pred    storage.SelectionPredicate
	rewatch func(from int64) (storage.Watcher, error)

	done     chan struct{}
	mu       sync.Mutex
	w        storage.Watcher
	stopped  bool
	restarts int
	events   []string
}

// start reads w in a goroutine of its own: pulled (as the HTTP handler
// reads, waiting or not at random) or from ResultChan.
func (r *recorder) start(w storage.Watcher, pull bool) {
	r.w, r.done = w, make(chan struct{})
	if _, ok := w.(storage.Puller); pull && !ok {
		panic("the cacher's watchers are storage.Pullers")
	}
	next := func(w storage.Watcher) (storage.Event, bool) {
		if pull {
			ev, status := storage.NextEvent(context.Background(), w, rand.IntN(2) == 0)
			for status == storage.Pending {
				goruntime.Gosched()
				ev, status = storage.NextEvent(context.Background(), w, rand.IntN(2) == 0)
			}
			return ev, status == storage.Got
		}
		ev, ok := <-w.ResultChan()
		return ev, ok
	}
	go func() {
		defer close(r.done)
		last := r.from
		for {
			ev, ok := next(w)
			if !ok {
				if w = r.restart(last); w == nil {
					return
				}
				continue
			}
			line := ""
			switch ev.Type {
			case watch.Bookmark:
				last = ev.ResourceVersion
				continue
			case watch.Error:
				line = "ERROR " + ev.Err.Error()
			default:
				line = fmt.Sprintf("%s %s %d", ev.Type, ev.Object.Key, ev.Object.ResourceVersion)
				last = ev.Object.ResourceVersion
			}
			r.mu.Lock()
			r.events = append(r.events, line)
			r.mu.Unlock()
			if ev.Type == watch.Error {
				return // the watch says why it ended: no starting again
			}
		}
	}()
}

// restart watches again from last after the watch ended, unless stop
// ended it or the recorder does not rewatch; nil means done.
func (r *recorder) restart(last int64) storage.Watcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.rewatch == nil {
		return nil
	}
	w, err := r.rewatch(last)
	if err != nil {
		r.events = append(r.events, "REWATCH "+err.Error())
		return nil
	}
	r.w = w
	r.restarts++
	return w
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// stop ends the watch and returns everything it received.
func (r *recorder) stop() []string {
	r.mu.Lock()
	r.stopped = true
	r.w.Stop()
	r.mu.Unlock()
	<-r.done
	return r.events
}

// syncMax is the largest revision seen, shared by the writers.
type syncMax struct {
	mu sync.Mutex
	v  int64
}

func (m *syncMax) set(v int64) {
	m.mu.Lock()
	m.v = max(m.v, v)
	m.mu.Unlock()
}

func (m *syncMax) get() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.v
}

// change is one write as etcd recorded it, with the pod before and after.
type change struct {
	key       string
	rev       int64
	cur, prev *corev1.Pod // cur nil for a deletion, prev nil for a creation
}

// etcdHistory reads etcd's own record of every change to the resource in
// (from, to].
func etcdHistory(t *testing.T, ctx context.Context, client *clientv3.Client, cfg storage.Config, from, to int64) []change {
	t.Helper()
	decode := func(data []byte, rev int64) *corev1.Pod {
		if data == nil {
			return nil
		}
		o, err := storage.NewObject("", rev, data)
		if err != nil {
			t.Fatal(err)
		}
		p := &corev1.Pod{}
		if err := o.Decode(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var out []change
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range client.Watch(wctx, cfg.ResourcePrefix+"/", clientv3.WithPrefix(), clientv3.WithRev(from+1), clientv3.WithPrevKV()) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			c := change{key: string(ev.Kv.Key), rev: ev.Kv.ModRevision}
			if ev.Type == clientv3.EventTypePut {
				c.cur = decode(ev.Kv.Value, ev.Kv.ModRevision)
			}
			if ev.PrevKv != nil {
				c.prev = decode(ev.PrevKv.Value, ev.PrevKv.ModRevision)
			}
			out = append(out, c)
			if c.rev >= to {
				return out
			}
		}
	}
	t.Fatal("etcd history ended early")
	return nil
}

// expectedFor is what a watch from rev on key with pred must report: the
// changes after rev, as seen through its selector.
func expectedFor(history []change, from int64, key string, pred storage.SelectionPredicate) []string {
	matches := func(k string, p *corev1.Pod) bool {
		if p == nil || !strings.HasPrefix(k, key+"/") {
			return false
		}
		ok, _ := pred.Matches(p)
		return ok
	}
	var out []string
	for _, c := range history {
		if c.rev <= from {
			continue
		}
		cur, prev := matches(c.key, c.cur), matches(c.key, c.prev)
		typ := ""
		switch {
		case c.cur == nil && prev:
			typ = "DELETED"
		case c.cur == nil:
		case cur && prev:
			typ = "MODIFIED"
		case cur:
			typ = "ADDED"
		case prev:
			typ = "DELETED"
		}
		if typ != "" {
			out = append(out, fmt.Sprintf("%s %s %d", typ, c.key, c.rev))
		}
	}
	return out
}

func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first difference at %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("extra events from %d: %q", len(want), got[len(want)])
	}
	if len(got) < len(want) {
		return fmt.Sprintf("missing events from %d: %q", len(got), want[len(got)])
	}
	return ""
}

// randomWrite creates, updates or deletes a random pod and returns the
// revision of the write.
func randomWrite(ctx context.Context, s storage.Interface, cfg storage.Config, r *rand.Rand) (int64, error) {
	ns, name := fmt.Sprintf("ns%d", r.IntN(3)), fmt.Sprintf("p%d", r.IntN(60))
	key := cfg.ResourcePrefix + "/" + ns + "/" + name
	apps := []string{"a", "b", "c"}
	nodes := []string{"n1", "n2", ""}
	for {
		out := &corev1.Pod{}
		err := s.Get(ctx, key, storage.GetOptions{}, out)
		switch {
		case storage.IsNotFound(err):
			pod := storagetest.NewPod(ns, name, nodes[r.IntN(3)], map[string]string{"app": apps[r.IntN(3)]})
			err = s.Create(ctx, key, pod, out, 0)
			if storage.IsExist(err) {
				continue
			}
		case err != nil:
		case r.IntN(4) == 0:
			err = s.Delete(ctx, key, out, nil, nil, nil)
			if storage.IsNotFound(err) {
				continue
			}
		default:
			err = s.GuaranteedUpdate(ctx, key, out, false, nil,
				func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
					p := in.(*corev1.Pod)
					p.Labels = map[string]string{"app": apps[r.IntN(3)], "n": strconv.Itoa(r.Int())}
					p.Spec.NodeName = nodes[r.IntN(3)]
					return p, nil, nil
				}, nil)
			if storage.IsNotFound(err) {
				continue
			}
		}
		if err != nil {
			return 0, err
		}
		return storage.ObjectResourceVersion(out)
	}
}
