package ha

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/test/internal/etcdcluster"
)

// TestWritesResumeAfterEtcdLeaderKilled kills the etcd leader while a
// client writes through a replica: writes succeed again (within the
// test's bound) and every acknowledged write is there afterwards.
func TestWritesResumeAfterEtcdLeaderKilled(t *testing.T) {
	t.Parallel()
	took := leaderFailover(t)
	t.Logf("first write acknowledged %v after the etcd leader was killed", took)
}

// BenchmarkEtcdLeaderFailover measures the time from killing the etcd
// leader to the first acknowledged write through a replica (a cluster
// per iteration; run with -benchtime=Nx).
func BenchmarkEtcdLeaderFailover(b *testing.B) {
	var total time.Duration
	for b.Loop() {
		total += leaderFailover(b)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "failover-ms")
}

// leaderFailover starts a 3-member etcd cluster and a replica over it,
// writes ConfigMaps in a loop, kills the leader after a few writes, and
// returns the time from the kill to the next acknowledged write.
func leaderFailover(tb testing.TB) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := tb.TempDir()
	ec, err := etcdcluster.Start(filepath.Join(dir, "etcd"), members)
	if err != nil {
		tb.Fatal(err)
	}
	c := &cluster{etcd: ec}
	defer func() {
		if err := ec.Stop(); err != nil {
			tb.Error(err)
		}
	}()
	port, err := etcdcluster.FreePort()
	if err != nil {
		tb.Fatal(err)
	}
	c.port = port
	ts, _, err := c.startReplica(filepath.Join(dir, "replica"), 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer ts.Server.Stop()
	cfg := *ts.ClientConfig
	cfg.Timeout = 2 * time.Second // a write stuck on the dead leader is retried, not waited for
	cms := kubernetes.NewForConfigOrDie(&cfg).CoreV1().ConfigMaps(metav1.NamespaceDefault)

	var acked []string
	var killed time.Time
	for i := 0; ; i++ {
		if ctx.Err() != nil {
			tb.Fatalf("no write succeeded within the bound after the etcd leader was killed (%d acknowledged before)", len(acked))
		}
		if i == 10 {
			leader := ec.Leader()
			if leader < 0 {
				tb.Fatal("the etcd cluster has no leader")
			}
			if err := ec.Kill(leader); err != nil {
				tb.Fatal(err)
			}
			killed = time.Now()
		}
		name := fmt.Sprintf("failover-%d", i)
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			continue
		}
		acked = append(acked, name)
		if !killed.IsZero() {
			break
		}
	}
	took := time.Since(killed)
	// Read back without the short timeout: the replica's etcd client may
	// still be trying the dead member first.
	for _, name := range acked {
		if _, err := kubernetes.NewForConfigOrDie(ts.ClientConfig).CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{}); err != nil {
			tb.Errorf("acknowledged write %s: %v", name, err)
		}
	}
	return took
}
