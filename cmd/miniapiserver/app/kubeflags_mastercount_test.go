package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestMasterCountReconciler: two replicas over one etcd with
// --endpoint-reconciler-type=master-count --apiserver-count=2 both end up
// in the kubernetes endpoints (and their EndpointSlice), without leases;
// one stopped takes its address out.
func TestMasterCountReconciler(t *testing.T) {
	etcd := etcdtest.Start(t)
	replica := func(address string) *testserver.TestServer {
		return testserver.Start(t, testserver.WithEtcd(etcd.URL()), withFlags(t, "--endpoint-reconciler-type=master-count",
			"--apiserver-count=2", "--advertise-address="+address), func(o *app.Options) { o.EndpointReconcilerInterval = 100 * time.Millisecond })
	}
	first := replica("10.200.0.1")
	second := replica("10.200.0.2")
	client := kubernetes.NewForConfigOrDie(first.ClientConfig)
	ctx := context.Background()
	waitForAddresses(t, client, "10.200.0.1", "10.200.0.2")
	leases, err := client.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "apiserver.kubernetes.io/identity=kube-apiserver"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		if l.Annotations["apiserver.miniapiserver.io/advertise-address"] != "" {
			t.Errorf("lease %s of the lease reconciler under master-count", l.Name)
		}
	}
	second.Server.Stop()
	waitForAddresses(t, client, "10.200.0.1")
}

// waitForAddresses waits until the kubernetes endpoints and their slice
// list exactly want.
func waitForAddresses(t *testing.T, client kubernetes.Interface, want ...string) {
	t.Helper()
	ctx := context.Background()
	var got, gotSlice []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got, gotSlice = nil, nil
		if ep, err := client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err == nil {
			for _, s := range ep.Subsets {
				for _, a := range s.Addresses {
					got = append(got, a.IP)
				}
			}
		}
		if es, err := client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{}); err == nil {
			for _, e := range es.Endpoints {
				gotSlice = append(gotSlice, e.Addresses...)
			}
		}
		if slices.Equal(got, want) && slices.Equal(gotSlice, want) {
			return
		}
	}
	t.Fatalf("kubernetes endpoints %v, slice %v; want %v", got, gotSlice, want)
}
