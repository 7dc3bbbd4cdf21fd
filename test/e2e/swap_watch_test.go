package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// journalLabel marks the ConfigMaps and Secrets whose every write the
// test journals and its recorders watch.
const journalLabel = "swap-journal"

// write is one write of the journal, or one event a recorder saw.
type write struct {
	resource string // configmaps or secrets
	typ      watch.EventType
	name     string
	rv       string // the object's resourceVersion after it ("" for a delete: kube returns none)
	via      string // the server written through
}

func (w write) String() string {
	return fmt.Sprintf("%s %s/%s@%s", w.typ, w.resource, w.name, w.rv)
}

// journal is every write the test made to journalled objects, in order.
// Writes are made one at a time, each once the previous one returned, so
// the journal's order is etcd's.
type journal struct {
	mu     sync.Mutex
	writes []write
}

func (j *journal) len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.writes)
}

func (j *journal) since(i int) []write {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]write(nil), j.writes[i:]...)
}

// apply makes one write through client (the server named via): creates,
// updates (a new value of key n) or deletes the journalled ConfigMap or
// Secret ns/name, and journals it.
func (j *journal) apply(t *testing.T, via string, client kubernetes.Interface, ns, resource string, typ watch.EventType, name string) {
	t.Helper()
	ctx := t.Context()
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{journalLabel: "true"}}
	value := fmt.Sprintf("%s %d", via, j.len())
	var obj metav1.Object
	var err error
	switch {
	case resource == "configmaps" && typ == watch.Added:
		obj, err = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"n": value}}, metav1.CreateOptions{})
	case resource == "configmaps" && typ == watch.Modified:
		var cm *corev1.ConfigMap
		if cm, err = client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			cm.Data["n"] = value
			obj, err = client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		}
	case resource == "configmaps":
		err = client.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
	case typ == watch.Added:
		obj, err = client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta, StringData: map[string]string{"n": value}}, metav1.CreateOptions{})
	case typ == watch.Modified:
		var s *corev1.Secret
		if s, err = client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			s.Data["n"] = []byte(value)
			obj, err = client.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{})
		}
	default:
		err = client.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err != nil {
		t.Fatalf("%s %s/%s through %s: %v", typ, resource, name, via, err)
	}
	w := write{resource: resource, typ: typ, name: name, via: via}
	if obj != nil {
		w.rv = obj.GetResourceVersion()
	}
	j.mu.Lock()
	j.writes = append(j.writes, w)
	j.mu.Unlock()
}

// recorder watches the journalled objects of one resource in a namespace
// through one server, from the resourceVersion of a list made when it
// started, resuming after the watch ends from the last resourceVersion it
// saw, as client-go's RetryWatcher does: it must see every write journalled
// since, once each, in order.
type recorder struct {
	name     string
	resource string
	from     int // the first write of the journal it must see
	stop     context.CancelFunc
	done     chan struct{}

	mu   sync.Mutex
	seen []write
	err  error // an error event (410 Gone included) ends it
}

// startRecorder starts a recorder through client (the server named via)
// and returns once its first watch is made.
func startRecorder(t *testing.T, via string, client kubernetes.Interface, ns, resource string, j *journal) *recorder {
	t.Helper()
	r := &recorder{name: resource + " through " + via, resource: resource, done: make(chan struct{})}
	opts := metav1.ListOptions{LabelSelector: journalLabel}
	var rv string
	switch resource {
	case "configmaps":
		list, err := client.CoreV1().ConfigMaps(ns).List(t.Context(), opts)
		if err != nil {
			t.Fatalf("%s: listing: %v", r.name, err)
		}
		rv = list.ResourceVersion
	default:
		list, err := client.CoreV1().Secrets(ns).List(t.Context(), opts)
		if err != nil {
			t.Fatalf("%s: listing: %v", r.name, err)
		}
		rv = list.ResourceVersion
	}
	r.from = j.len() // no write is under way: every later one comes after rv
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = journalLabel
		if resource == "configmaps" {
			return client.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		}
		return client.CoreV1().Secrets(ns).Watch(ctx, o)
	}}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, lw)
	if err != nil {
		t.Fatal(err)
	}
	go r.run(ctx, rw)
	t.Cleanup(r.close)
	return r
}

func (r *recorder) run(ctx context.Context, rw *watchtools.RetryWatcher) {
	defer close(r.done)
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return
			}
			r.mu.Lock()
			if ev.Type == watch.Error {
				r.err = fmt.Errorf("%s: error event %v", r.name, ev.Object)
				r.mu.Unlock()
				return
			}
			m, _ := ev.Object.(metav1.Object)
			r.seen = append(r.seen, write{resource: r.resource, typ: ev.Type, name: m.GetName(), rv: m.GetResourceVersion()})
			r.mu.Unlock()
		}
	}
}

// close stops the recorder and waits until it has.
func (r *recorder) close() {
	r.stop()
	<-r.done
}

// check waits until r has seen as many events as the journal has writes
// of its resource since it started, then fails t unless they are exactly
// those writes, in order, once each (a delete's resourceVersion, which
// the writer is not told, must only come after the one before).
func (r *recorder) check(t *testing.T, j *journal) {
	t.Helper()
	var want []write
	for _, w := range j.since(r.from) {
		if w.resource == r.resource {
			want = append(want, w)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	var seen []write
	var err error
	for {
		r.mu.Lock()
		seen, err = append([]write(nil), r.seen...), r.err
		r.mu.Unlock()
		if len(seen) >= len(want) || err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // room for an event too many
	r.mu.Lock()
	seen = append([]write(nil), r.seen...)
	r.mu.Unlock()
	if err != nil {
		t.Errorf("%s: %v", r.name, err)
	}
	if problem := compareEvents(want, seen); problem != "" {
		t.Errorf("%s: %s\nwant %d events: %s\nseen %d events: %s", r.name, problem, len(want), joinWrites(want), len(seen), joinWrites(seen))
	}
}

// compareEvents says how seen differs from the writes want, or "".
func compareEvents(want, seen []write) string {
	var last uint64
	for i, s := range seen {
		rv, err := strconv.ParseUint(s.rv, 10, 64)
		if err != nil || rv <= last {
			return fmt.Sprintf("event %d (%s): resourceVersion not after the one before (%d)", i, s, last)
		}
		last = rv
		if i >= len(want) {
			return fmt.Sprintf("event %d (%s) is one too many", i, s)
		}
		w := want[i]
		if s.typ != w.typ || s.name != w.name || (w.rv != "" && s.rv != w.rv) {
			return fmt.Sprintf("event %d is %s, want %s (written through %s)", i, s, w, w.via)
		}
	}
	if len(seen) < len(want) {
		return fmt.Sprintf("events lost from %d on: %s", len(seen), joinWrites(want[len(seen):]))
	}
	return ""
}

func joinWrites(ws []write) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.String()
	}
	return strings.Join(s, ", ")
}
