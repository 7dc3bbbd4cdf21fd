package apf

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// The flood: floodWorkers clients of one tenant LISTing, back to back,
// the floodObjects ConfigMaps of floodSize bytes of a namespace (2 MB a
// LIST, from the watch cache).
const (
	floodWorkers = 64
	floodObjects = 2000
	floodSize    = 1024
)

// BenchmarkLeaseUnderListFlood measures what a noisy tenant flooding
// LISTs does to leader election: each op is an update of a kube-system
// Lease by system:kube-controller-manager (what its leader election
// does every 2 s), with API Priority and Fairness on (with kube's
// default seats and with seats sized to a small machine) and off, without
// and with the flood. It reports the updates' p50 and p99 in ms, and the
// flood's LISTs served and refused per second. With APF_BENCH_REFERENCE=1
// it measures kube-apiserver the same way in the same run (started by
// $REFERENCE_KUBE/start-kube.sh, binaries in $PEER_BIN, as test/e2e's
// -reference).
//
//	go test ./test/integration/apf -run '^$' -bench LeaseUnderListFlood -benchtime 400x
//	APF_BENCH_REFERENCE=1 go test ./test/integration/apf -run '^$' -bench LeaseUnderListFlood -benchtime 400x
func BenchmarkLeaseUnderListFlood(b *testing.B) {
	servers := []benchServer{{"miniapiserver", startThisServer}}
	if os.Getenv("APF_BENCH_REFERENCE") == "1" {
		servers = append(servers, benchServer{"kube-apiserver", startReference})
	}
	for _, cfg := range []floodConfig{
		{"apf=true", true, [2]int{}},
		// The seats sized to 2 cores rather than kube's default.
		{"apf=true,seats=12", true, [2]int{8, 4}},
		{"apf=false", false, [2]int{}},
	} {
		for _, srv := range servers {
			b.Run("server="+srv.name+","+cfg.name, func(b *testing.B) {
				// Both servers are reached alike: the administrator's
				// credentials, impersonating the controller manager and
				// the tenant (APF classifies the impersonated user).
				admin := srv.start(b, cfg)
				admin.QPS, admin.Burst = -1, 0 // no client-side throttling
				fillNamespace(b, kubernetes.NewForConfigOrDie(admin))
				kcm := kubernetes.NewForConfigOrDie(impersonating(admin, "system:kube-controller-manager"))
				// The tenant does not back off (client-go would, on 429s).
				tenant, err := rest.HTTPClientFor(impersonating(admin, "tenant"))
				if err != nil {
					b.Fatal(err)
				}
				url := admin.Host + "/api/v1/namespaces/tenant/configmaps"
				for _, flood := range []bool{false, true} {
					b.Run(fmt.Sprintf("flood=%v", flood), func(b *testing.B) { measureFlood(b, kcm, tenant, url, flood) })
				}
			})
		}
	}
}

// floodConfig is a flow control setting of the server measured.
type floodConfig struct {
	name string
	apf  bool
	// seats are --max-requests-inflight and
	// --max-mutating-requests-inflight (0: kube's 400 and 200).
	seats [2]int
}

// benchServer starts a server with a floodConfig and returns its
// administrator's client configuration.
type benchServer struct {
	name  string
	start func(testing.TB, floodConfig) *rest.Config
}

func startThisServer(b testing.TB, cfg floodConfig) *rest.Config {
	ts := testserver.Start(b, alwaysAllow, func(o *app.Options) {
		o.Auth.EnablePriorityAndFairness = cfg.apf
		if cfg.seats[0] > 0 {
			o.Auth.MaxRequestsInflight, o.Auth.MaxMutatingRequestsInflight = cfg.seats[0], cfg.seats[1]
		}
	})
	return rest.CopyConfig(ts.ClientConfig)
}

func impersonating(admin *rest.Config, name string) *rest.Config {
	c := rest.CopyConfig(admin)
	c.Impersonate = rest.ImpersonationConfig{UserName: name}
	return c
}

// measureFlood renews the lease b.N times, under the tenant's flood or
// not, and reports the renewals' latency and what the flood got.
func measureFlood(b *testing.B, kcm kubernetes.Interface, tenant *http.Client, url string, flood bool) {
	var served, refused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if flood {
		for range floodWorkers {
			wg.Go(func() { listUntil(stop, tenant, url, &served, &refused) })
		}
		time.Sleep(time.Second) // the flood at its height
	}
	start := time.Now()
	lat := renewLease(b, kcm)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99+99)/100-1]), "p99-ms")
	b.ReportMetric(float64(served.Load())/elapsed.Seconds(), "lists-served/s")
	b.ReportMetric(float64(refused.Load())/elapsed.Seconds(), "lists-429/s")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fillNamespace(b *testing.B, cs kubernetes.Interface) {
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range floodObjects {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := cs.CoreV1().ConfigMaps("tenant").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i)},
				Data: map[string]string{"k": strings.Repeat("v", floodSize)}}, metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	_, err := cs.CoordinationV1().Leases("kube-system").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "bench-leader"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("kcm-1"), LeaseDurationSeconds: ptr.To[int32](15)}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
}

// listUntil LISTs the tenant's ConfigMaps until stop, counting what is
// served and what is refused (429), at once again either way.
func listUntil(stop <-chan struct{}, c *http.Client, url string, served, refused *atomic.Int64) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		resp, err := c.Get(url)
		if err != nil {
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			served.Add(1)
		case http.StatusTooManyRequests:
			refused.Add(1)
		}
	}
}

// renewLease updates the lease b.N times, 20 ms apart, and returns each
// update's latency.
func renewLease(b *testing.B, cs kubernetes.Interface) []time.Duration {
	leases := cs.CoordinationV1().Leases("kube-system")
	lease, err := leases.Get(context.Background(), "bench-leader", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		start := time.Now()
		lease, err = leases.Update(context.Background(), lease, metav1.UpdateOptions{})
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.StopTimer()
	return lat
}
