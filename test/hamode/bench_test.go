package hamode

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// BenchmarkEmbeddedHAForm measures the time for three servers to form
// an embedded etcd cluster and serve, each started once the one before
// is ready (a cluster per iteration; run with -benchtime=Nx). A join
// waits until the members have been connected for 5 s (etcd's rule
// before it adds a member): the third server waits for the second.
func BenchmarkEmbeddedHAForm(b *testing.B) {
	var first, second, third time.Duration
	for b.Loop() {
		root := b.TempDir()
		began := time.Now()
		s0 := newServer(b, root, "s0", nil)
		s0.start(b, "--embedded-etcd-cluster-init")
		t0 := time.Now()
		s1, s2 := newServer(b, root, "s1", s0), newServer(b, root, "s2", s0)
		s1.start(b, "--embedded-etcd-join="+s0.peerURL)
		t1 := time.Now()
		s2.start(b, "--embedded-etcd-join="+s0.peerURL)
		t2 := time.Now()
		first, second, third = first+t0.Sub(began), second+t1.Sub(t0), third+t2.Sub(t1)
		b.Logf("ready: first %v, second %v later, third %v later (total %v)", t0.Sub(began), t1.Sub(t0), t2.Sub(t1), t2.Sub(began))
		b.StopTimer()
		for _, s := range []*server{s0, s1, s2} {
			s.stop()
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(first.Milliseconds())/n, "first-ms")
	b.ReportMetric(float64(second.Milliseconds())/n, "second-ms")
	b.ReportMetric(float64(third.Milliseconds())/n, "third-ms")
	b.ReportMetric(float64((first+second+third).Milliseconds())/n, "formed-ms")
}

// BenchmarkEmbeddedHAFailover measures, on a cluster of three servers,
// the time from killing (SIGKILL) the server whose member is the etcd
// leader to the first write acknowledged by another server, written in a
// loop (500 ms timeout per request: the figure is that precise).
func BenchmarkEmbeddedHAFailover(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		root := b.TempDir()
		s0 := newServer(b, root, "s0", nil)
		s0.start(b, "--embedded-etcd-cluster-init")
		s1, s2 := newServer(b, root, "s1", s0), newServer(b, root, "s2", s0)
		s1.start(b, "--embedded-etcd-join="+s0.peerURL)
		s2.start(b, "--embedded-etcd-join="+s0.peerURL)
		servers := []*server{s0, s1, s2}
		leader := slices.IndexFunc(servers, func(s *server) bool { return s.isLeader(b) })
		writer := servers[(leader+1)%3]
		cfg, err := clientcmd.BuildConfigFromFlags("", writer.dir+"/kubeconfig")
		if err != nil {
			b.Fatal(err)
		}
		cfg.Timeout = 500 * time.Millisecond
		cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps(namespace)
		b.StartTimer()

		servers[leader].kill(b)
		killed := time.Now()
		for i := 0; ; i++ {
			if time.Since(killed) > time.Minute {
				b.Fatal("no write acknowledged within a minute of the leader's loss")
			}
			_, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("failover-%d", i)}}, metav1.CreateOptions{})
			if err == nil {
				break
			}
		}
		took := time.Since(killed)
		total += took
		b.Logf("killed %s (leader); first write acknowledged by %s after %v", servers[leader].name, writer.name, took)
		b.StopTimer()
		for _, s := range servers {
			s.stop()
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "failover-ms")
}
