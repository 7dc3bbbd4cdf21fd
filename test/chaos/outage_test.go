package chaos

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMajorityOutage stops two of three etcd members under a replica:
// /readyz fails and writes fail with a 5xx Status in time (checkOutage);
// a watch open before the outage stays open through it, and once the
// members are back it gets the changes made after, with none lost.
func TestMajorityOutage(t *testing.T) {
	t.Parallel()
	const ns = "outage"
	c := startCluster(t, 3, 1)
	ec := c.etcd
	client, err := clientv3.New(clientv3.Config{Endpoints: ec.ClientURLs(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(t.Context(), "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	h := recordHistory(t.Context(), client, resp.Header.Revision)
	f := newFailover(c.addresses(), 0)
	cs := f.clientset(writeTimeout)
	// A namespace created after the history's start: all of its objects
	// are in it.
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// A watch that outlives the test's bounds unless it is ended.
	w := newWatcher(0, ns, f)
	w.timeout = 600
	ctx, stop := context.WithCancel(t.Context())
	var watching sync.WaitGroup
	watching.Go(func() { w.run(ctx) })
	defer func() { stop(); watching.Wait() }()
	waitFor(t, "the watch to start", func() bool { return w.caughtUp(resp.Header.Revision) })

	l := ec.WaitLeader(time.Minute)
	if l < 0 {
		t.Fatal("the etcd cluster has no leader")
	}
	other := (l + 1) % ec.Size()
	if err := errors.Join(ec.Kill(l), ec.Kill(other)); err != nil {
		t.Fatal(err)
	}
	if err := checkOutage(t.Context(), c.addresses(), ns); err != nil {
		t.Error(err)
	}
	if err := errors.Join(ec.Restart(l), ec.Restart(other)); err != nil {
		t.Fatal(err)
	}
	quorumBack := time.Now()
	var after *corev1.ConfigMap
	waitFor(t, "a write to succeed once quorum is back", func() bool {
		after, err = cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "after-"}}, metav1.CreateOptions{})
		return err == nil
	})
	t.Logf("the first write succeeded %v after the members were started again", time.Since(quorumBack).Round(time.Millisecond))
	waitFor(t, "the watch to see the write made after the outage", func() bool { return w.caughtUp(parseRV(after.ResourceVersion)) })
	stop()
	watching.Wait()

	if w.reconnects > 0 || len(w.epochs) != 1 {
		t.Errorf("the watch open before the outage ended: %d reconnections (%v), %d lists", w.reconnects, w.ends, len(w.epochs))
	}
	checkWatchers(t, h, []*watcher{w}, []string{ns})
	if got := h.of(ns+"/"+after.Name, 0, math.MaxInt64); len(got) != 1 {
		t.Errorf("etcd's history of %s: %v", after.Name, got)
	}
}

// waitFor polls cond for up to a minute.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(fmt.Sprintf("timed out waiting for %s", what))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
