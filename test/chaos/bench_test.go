package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkReplicas measures write and watch throughput through 1 and 3
// replicas over the same 3-member etcd cluster: 16 writers update their
// ConfigMap (conditional on its resourceVersion) 200 times each, spread
// over the replicas, while 30 watchers spread over them receive every
// change. Run with -benchtime=1x.
func BenchmarkReplicas(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) { benchmarkReplicas(b, n) })
	}
}

func benchmarkReplicas(b *testing.B, n int) {
	const writers, updates, watchers = 16, 200, 30
	c := startCluster(b, 3, n)
	ns := "bench"
	cs := newFailover(c.addresses(), 0).clientset(writeTimeout)
	if _, err := cs.CoreV1().Namespaces().Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var writeTime, deliverTime time.Duration
	var events int64
	for i := 0; b.Loop(); i++ {
		ws, stop := startWatchers(b, c, ns, watchers)
		start := time.Now()
		last := writeAll(b, c, ns, fmt.Sprintf("i%d", i), writers, updates)
		writeTime += time.Since(start)
		waitFor(b, "every watcher to see every write", func() bool {
			for _, w := range ws {
				if !w.caughtUp(last) {
					return false
				}
			}
			return true
		})
		deliverTime += time.Since(start)
		stop()
		for _, w := range ws {
			for _, e := range w.epochs {
				for _, cs := range e.events {
					events += int64(len(cs))
				}
			}
		}
	}
	b.ReportMetric(float64(b.N*writers*(updates+1))/writeTime.Seconds(), "writes/s")
	b.ReportMetric(float64(events)/deliverTime.Seconds(), "events/s")
}

// startWatchers starts watchers of ns spread over the replicas.
func startWatchers(tb testing.TB, c *cluster, ns string, n int) ([]*watcher, func()) {
	ctx, cancel := context.WithCancel(tb.Context())
	var wg sync.WaitGroup
	var ws []*watcher
	for i := range n {
		w := newWatcher(i, ns, newFailover(c.addresses(), i))
		w.timeout = 600
		ws = append(ws, w)
		wg.Go(func() { w.run(ctx) })
	}
	waitFor(tb, "the watchers to list", func() bool {
		for _, w := range ws {
			if !w.caughtUp(0) {
				return false
			}
		}
		return true
	})
	return ws, func() { cancel(); wg.Wait() }
}

// writeAll creates a ConfigMap per writer and updates it updates times,
// writer i through replica i mod len(replicas); it returns the highest
// resourceVersion written.
func writeAll(tb testing.TB, c *cluster, ns, prefix string, writers, updates int) int64 {
	var last atomic.Int64
	var wg sync.WaitGroup
	for i := range writers {
		cms := newFailover(c.addresses(), i).clientset(writeTimeout).CoreV1().ConfigMaps(ns)
		wg.Go(func() {
			cm, err := cms.Create(tb.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + strconv.Itoa(i)}}, metav1.CreateOptions{})
			for u := 0; err == nil && u < updates; u++ {
				cm.Data = map[string]string{"u": strconv.Itoa(u)}
				cm, err = cms.Update(tb.Context(), cm, metav1.UpdateOptions{})
			}
			if err != nil {
				tb.Error(err)
				return
			}
			for rv := parseRV(cm.ResourceVersion); ; {
				cur := last.Load()
				if rv <= cur || last.CompareAndSwap(cur, rv) {
					break
				}
			}
		})
	}
	wg.Wait()
	return last.Load()
}

// BenchmarkInformerFailover measures the time from killing (SIGKILL) the
// replica a client-go informer watches through to the moment the informer
// holds a write made right after the kill through another replica.
func BenchmarkInformerFailover(b *testing.B) {
	c := startCluster(b, 3, 2)
	ns := "failover"
	other := newFailover(c.addresses()[1:], 0).clientset(writeTimeout)
	if _, err := other.CoreV1().Namespaces().Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		ctx, cancel := context.WithCancel(b.Context())
		inf, err := startInformer(ctx, ns, newFailover(c.addresses(), 0))
		if err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the informer to sync", inf.synced)
		c.replicas[0].kill()
		killed := time.Now()
		name := "after-kill-" + strconv.Itoa(i)
		if _, err := other.CoreV1().ConfigMaps(ns).Create(b.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		waitFor(b, "the informer to resume", func() bool { _, ok := inf.state()[ns+"/"+name]; return ok })
		total += time.Since(killed)
		cancel()
		if err := c.replicas[0].start(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "resume-ms")
}

// BenchmarkMajorityOutageRecovery measures the time from starting again the
// two etcd members of a majority outage to the first write acknowledged
// through a replica (and until a watch open through the outage sees it).
func BenchmarkMajorityOutageRecovery(b *testing.B) {
	c := startCluster(b, 3, 1)
	ns := "recovery"
	cs := newFailover(c.addresses(), 0).clientset(2 * time.Second)
	if _, err := cs.CoreV1().Namespaces().Create(b.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var write, watched time.Duration
	for i := 0; b.Loop(); i++ {
		ws, stop := startWatchers(b, c, ns, 1)
		l := c.etcd.WaitLeader(time.Minute)
		o := (l + 1) % c.etcd.Size()
		if err := errors.Join(c.etcd.Kill(l), c.etcd.Kill(o)); err != nil {
			b.Fatal(err)
		}
		waitFor(b, "/readyz to fail", func() bool { return readyz(b.Context(), c.addresses()[0]) != nil })
		if err := c.etcd.Restart(l); err != nil {
			b.Fatal(err)
		}
		if err := c.etcd.Restart(o); err != nil {
			b.Fatal(err)
		}
		restarted := time.Now()
		var cm *corev1.ConfigMap
		waitFor(b, "a write to succeed", func() bool {
			var err error
			cm, err = cs.CoreV1().ConfigMaps(ns).Create(b.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "after-"}}, metav1.CreateOptions{})
			return err == nil
		})
		write += time.Since(restarted)
		waitFor(b, "the watch to see it", func() bool { return ws[0].caughtUp(parseRV(cm.ResourceVersion)) })
		watched += time.Since(restarted)
		stop()
		if err := c.etcd.WaitReady(l, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(write.Milliseconds())/float64(b.N), "first-write-ms")
	b.ReportMetric(float64(watched.Milliseconds())/float64(b.N), "watch-sees-it-ms")
}
