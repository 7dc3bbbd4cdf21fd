package ha

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestWritesSeenInOrderByEveryReplica writes a few ConfigMaps through every
// replica at once (each object updated through all of them) and checks:
// the watchers of every replica see, per object, exactly the acknowledged
// writes in the order of their resourceVersions; a consistent LIST
// through another replica right after a write includes it; and the
// resourceVersions each client reads never go backwards.
func TestWritesSeenInOrderByEveryReplica(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := shared.createNamespace(t)
	objects, updates := 4, 20
	if testing.Short() {
		updates = 5
	}
	start, err := shared.clients[0].CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var watchers []*recorder
	for i, client := range shared.clients {
		w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatalf("watch through replica %d: %v", i, err)
		}
		t.Cleanup(w.Stop)
		watchers = append(watchers, record(w))
	}
	names := make([]string, objects)
	for o := range names {
		names[o] = "cm-" + strconv.Itoa(o)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: names[o]}, Data: map[string]string{"n": "0"}}
		created, err := shared.clients[o%replicas].CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		acked.add(ns, names[o], created.ResourceVersion)
	}

	var wg sync.WaitGroup
	errs := make(chan error, replicas*objects)
	for r := range replicas {
		for _, name := range names {
			wg.Go(func() {
				w := writer{client: shared.clients[r], reader: shared.clients[(r+1)%replicas], ns: ns, name: name}
				for u := range updates {
					if err := w.update(ctx, fmt.Sprintf("%d-%d", r, u)); err != nil {
						errs <- fmt.Errorf("replica %d, %s: %w", r, name, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	for _, name := range names {
		want := acked.sorted(ns, name)
		for i, w := range watchers {
			got, err := w.waitFor(ctx, name, want[len(want)-1])
			if err != nil {
				t.Fatalf("watcher of replica %d, %s: %v", i, name, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("watcher of replica %d saw %s at resourceVersions\n%v\nwant the acknowledged writes\n%v", i, name, got, want)
			}
		}
	}
}

// writer updates one object through one replica and, after each write,
// lists through another.
type writer struct {
	client, reader kubernetes.Interface
	ns, name       string
	// object and list are the highest resourceVersions this client has
	// read of its object and of the lists.
	object, list uint64
}

// update sets the object's data to value, retrying on conflicts (bounded),
// then checks that a consistent LIST through the reader includes the
// write.
func (w *writer) update(ctx context.Context, value string) error {
	cms := w.client.CoreV1().ConfigMaps(w.ns)
	for range 100 {
		cm, err := cms.Get(ctx, w.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := observe(&w.object, "GET", cm.ResourceVersion); err != nil {
			return err
		}
		cm.Data["n"] = value
		updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return err
		}
		acked.add(w.ns, w.name, updated.ResourceVersion)
		if err := observe(&w.object, "PUT", updated.ResourceVersion); err != nil {
			return err
		}
		return w.listIncludes(ctx, updated)
	}
	return fmt.Errorf("still conflicting after 100 updates")
}

func (w *writer) listIncludes(ctx context.Context, written *corev1.ConfigMap) error {
	list, err := w.reader.CoreV1().ConfigMaps(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if err := observe(&w.list, "LIST", list.ResourceVersion); err != nil {
		return err
	}
	for _, cm := range list.Items {
		if cm.Name == written.Name {
			if rv(cm.ResourceVersion) < rv(written.ResourceVersion) {
				return fmt.Errorf("a consistent LIST at %s after the write at %s shows it at %s",
					list.ResourceVersion, written.ResourceVersion, cm.ResourceVersion)
			}
			return nil
		}
	}
	return fmt.Errorf("a consistent LIST at %s after the write at %s misses it", list.ResourceVersion, written.ResourceVersion)
}

// observe checks that a resourceVersion read by a client (of one object,
// or of lists) is not older than the last it read, and keeps it in last.
func observe(last *uint64, verb, resourceVersion string) error {
	v := rv(resourceVersion)
	if v < *last {
		return fmt.Errorf("%s answered resourceVersion %d after this client had read %d", verb, v, *last)
	}
	*last = v
	return nil
}

func rv(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}

// acked holds the resourceVersions of acknowledged writes per object.
var acked = ackedWrites{m: map[string][]uint64{}}

type ackedWrites struct {
	mu sync.Mutex
	m  map[string][]uint64
}

func (a *ackedWrites) add(ns, name, resourceVersion string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.m[ns+"/"+name] = append(a.m[ns+"/"+name], rv(resourceVersion))
}

func (a *ackedWrites) sorted(ns, name string) []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(slices.Values(a.m[ns+"/"+name]))
}

// recorder keeps the resourceVersions a watch delivers, per object.
type recorder struct {
	mu      sync.Mutex
	changed *sync.Cond
	seen    map[string][]uint64
	err     error
}

func record(w watch.Interface) *recorder {
	r := &recorder{seen: map[string][]uint64{}}
	r.changed = sync.NewCond(&r.mu)
	go func() {
		for ev := range w.ResultChan() {
			r.mu.Lock()
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				r.seen[cm.Name] = append(r.seen[cm.Name], rv(cm.ResourceVersion))
			} else {
				r.err = fmt.Errorf("unexpected %s event: %v", ev.Type, ev.Object)
			}
			r.changed.Broadcast()
			r.mu.Unlock()
		}
		r.mu.Lock()
		if r.err == nil {
			r.err = fmt.Errorf("the watch ended")
		}
		r.changed.Broadcast()
		r.mu.Unlock()
	}()
	return r
}

// waitFor waits until the watch has delivered name at resourceVersion
// last (or later) and returns what it delivered for name.
func (r *recorder) waitFor(ctx context.Context, name string, last uint64) ([]uint64, error) {
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.changed.Broadcast()
		r.mu.Unlock()
	})
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if seen := r.seen[name]; len(seen) > 0 && seen[len(seen)-1] >= last {
			return slices.Clone(seen), nil
		}
		if r.err != nil {
			return slices.Clone(r.seen[name]), r.err
		}
		if ctx.Err() != nil {
			return slices.Clone(r.seen[name]), ctx.Err()
		}
		r.changed.Wait()
	}
}
