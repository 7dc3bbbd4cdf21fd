package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// writeTimeout bounds a writer's request: longer than the replicas'
// --request-timeout, so that the server's answer is what the writer sees.
const writeTimeout = requestTimeout + 5*time.Second

// ack is a write a replica acknowledged (2xx).
type ack struct {
	key  string // namespace/name
	verb string // create, update or delete
	rev  int64  // the object's resourceVersion after a create or update
	prev int64  // the resourceVersion an update or delete was conditional on
}

// writer creates, updates (conditional on the resourceVersion) and
// deletes (conditional too) the ConfigMaps it owns, one request at a
// time; no one else writes them, so it always knows what it expects.
// A write that fails without a clear answer (a timeout, a connection cut
// by a kill, a 5xx) may have been applied: the writer counts it as
// ambiguous, and reads the object again before writing it.
type writer struct {
	namespace string
	names     []string
	client    kubernetes.Interface
	rand      *rand.Rand

	// state is the resourceVersion of each object: 0 absent, -1 unknown.
	state     map[string]int64
	acks      []ack
	ambiguous map[string]int // by key
	failures  map[string]int // by error, for the log
	// lastRev is the resourceVersion of the writer's last acknowledged
	// write; each must be higher than the one before.
	lastRev   int64
	backwards []string
}

func newWriter(id int, namespace string, objects int, f *failover) *writer {
	w := &writer{namespace: namespace, client: f.clientset(writeTimeout), rand: rand.New(rand.NewPCG(uint64(id), 12)),
		state: map[string]int64{}, ambiguous: map[string]int{}, failures: map[string]int{}}
	for i := range objects {
		name := fmt.Sprintf("w%d-%d", id, i)
		w.names = append(w.names, name)
		w.state[name] = 0
	}
	return w
}

// run writes until stop is closed.
func (w *writer) run(stop <-chan struct{}) {
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		name := w.names[w.rand.IntN(len(w.names))]
		if err := w.write(name, seq); err != nil {
			w.failures[errorClass(err)]++
			// Do not spin while the cluster is down.
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// write makes one write of name (or reads it, if its state is unknown).
func (w *writer) write(name string, seq int) error {
	ctx := context.Background()
	cms := w.client.CoreV1().ConfigMaps(w.namespace)
	key := w.namespace + "/" + name
	rv := w.state[name]
	if rv < 0 {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			w.state[name] = 0
			return nil
		case err == nil:
			w.state[name] = parseRV(cm.ResourceVersion)
		}
		return err
	}
	w.state[name] = -1 // until the answer says
	data := map[string]string{"seq": strconv.Itoa(seq)}
	var a ack
	var err error
	switch {
	case rv == 0:
		var cm *corev1.ConfigMap
		cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}, metav1.CreateOptions{})
		if err == nil {
			a = ack{key: key, verb: "create", rev: parseRV(cm.ResourceVersion)}
		}
	case w.rand.IntN(4) == 0:
		rvs := strconv.FormatInt(rv, 10)
		err = cms.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rvs}})
		if err == nil {
			a = ack{key: key, verb: "delete", prev: rv}
		}
	default:
		var cm *corev1.ConfigMap
		cm, err = cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatInt(rv, 10)}, Data: data}, metav1.UpdateOptions{})
		if err == nil {
			a = ack{key: key, verb: "update", rev: parseRV(cm.ResourceVersion), prev: rv}
		}
	}
	if err != nil {
		w.ambiguous[key]++
		return err
	}
	w.acks = append(w.acks, a)
	w.state[name] = a.rev
	if a.rev != 0 {
		if a.rev <= w.lastRev {
			w.backwards = append(w.backwards, fmt.Sprintf("%s %s acknowledged at resourceVersion %d after %d", a.verb, key, a.rev, w.lastRev))
		}
		w.lastRev = a.rev
	}
	return nil
}

// errorClass names an error for the failure counts.
func errorClass(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%d %s", st.Code, st.Reason)
	}
	return "transport"
}

func parseRV(s string) int64 {
	rv, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return -1
	}
	return rv
}
