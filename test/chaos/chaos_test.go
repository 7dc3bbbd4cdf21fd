package chaos

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The load of TestChaos.
const (
	namespaces        = 3
	writersPerNS      = 2
	objectsPerWriter  = 8
	watcherCount      = 100
	allNSWatcherEvery = 10 // every tenth watcher watches all namespaces
	awayWatcherEvery  = 20 // and one in twenty waits long before watching again
)

// suite is TestChaos's cluster, its clients and etcd's history.
type suite struct {
	cluster    *cluster
	etcd       *clientv3.Client
	history    *history
	namespaces []string
}

// TestChaos runs writers, watchers and informers over three replicas while
// the schedule injects faults, then checks every client's record against
// etcd's history.
func TestChaos(t *testing.T) {
	t.Parallel()
	gap := 3 * time.Second
	if testing.Short() {
		gap = time.Second
	}
	s := startSuite(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addresses := s.cluster.addresses()

	stop := make(chan struct{})
	var writing sync.WaitGroup
	var writers []*writer
	for i := range namespaces * writersPerNS {
		w := newWriter(i, s.namespaces[i%namespaces], objectsPerWriter, newFailover(addresses, i))
		writers = append(writers, w)
		writing.Go(func() { w.run(stop) })
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	var watching sync.WaitGroup
	var watchers []*watcher
	for i := range watcherCount {
		ns := s.namespaces[i%namespaces]
		if i%allNSWatcherEvery == 0 {
			ns = ""
		}
		w := newWatcher(i, ns, newFailover(addresses, i))
		if i%awayWatcherEvery == 1 {
			w.away = 12 * time.Second // past the cache's 10 s compaction check
		}
		watchers = append(watchers, w)
		watching.Go(func() { w.run(watchCtx) })
	}
	var informers []*informer
	for i, ns := range s.namespaces {
		inf, err := startInformer(watchCtx, ns, newFailover(addresses, i))
		if err != nil {
			t.Fatal(err)
		}
		informers = append(informers, inf)
	}

	start := time.Now()
	for round := 0; round == 0 || time.Since(start) < *duration; round++ {
		for _, f := range s.schedule() {
			time.Sleep(gap)
			began := time.Now()
			if err := f.run(ctx); err != nil {
				t.Errorf("round %d, %s: %v", round, f.name, err)
			} else {
				t.Logf("round %d, %s: %v", round, f.name, time.Since(began).Round(time.Millisecond))
			}
		}
	}
	time.Sleep(gap)
	close(stop)
	writing.Wait()

	final := s.finalState(t)
	s.waitCaughtUp(t, final, watchers, informers)
	stopWatching()
	watching.Wait()

	checkWrites(t, s.history, writers)
	checkWatchers(t, s.history, watchers, s.namespaces)
	checkInformers(t, informers, final)
	logLoad(t, writers, watchers)
}

func startSuite(t *testing.T) *suite {
	c := startCluster(t, 3, 3)
	client, err := clientv3.New(clientv3.Config{Endpoints: c.etcd.ClientURLs(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	resp, err := client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{cluster: c, etcd: client, history: recordHistory(t.Context(), client, resp.Header.Revision)}
	cs := newFailover(c.addresses(), 0).clientset(writeTimeout)
	for i := range namespaces {
		ns, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chaos-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.namespaces = append(s.namespaces, ns.Name)
	}
	return s
}

// logLoad logs how much the clients did.
func logLoad(t *testing.T, writers []*writer, watchers []*watcher) {
	acks, ambiguous := 0, 0
	failures := map[string]int{}
	for _, w := range writers {
		acks += len(w.acks)
		for _, n := range w.ambiguous {
			ambiguous += n
		}
		for k, n := range w.failures {
			failures[k] += n
		}
	}
	epochs, events, reconnects := 0, 0, 0
	ends := map[string]int{}
	for _, w := range watchers {
		epochs += len(w.epochs)
		reconnects += w.reconnects
		for k, n := range w.ends {
			ends[k] += n
		}
		for _, e := range w.epochs {
			for _, cs := range e.events {
				events += len(cs)
			}
		}
	}
	t.Logf("writes: %d acknowledged, %d without a clear answer (failures by kind: %v)", acks, ambiguous, failures)
	t.Logf("watchers: %d events checked, %d lists (at the start or after a 410), %d reconnections (why the watches ended: %v)", events, epochs, reconnects, ends)
}
