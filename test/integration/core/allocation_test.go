package core

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestAllocationAcrossReplicasAndRestarts runs two servers on one etcd
// with a small service range: concurrent creates on both never share an
// IP, the range runs out with kube's error, and a server started later
// (a restart) sees what is taken.
func TestAllocationAcrossReplicasAndRestarts(t *testing.T) {
	etcd := etcdtest.Start(t)
	small := func(o *app.Options) { o.ServiceClusterIPRange = "10.100.0.0/28" } // 14 usable addresses
	a := testserver.Start(t, testserver.WithEtcd(etcd.URL()), small)
	b := testserver.Start(t, testserver.WithEtcd(etcd.URL()), small)
	ctx := context.Background()
	clients := []*kubernetes.Clientset{kubernetes.NewForConfigOrDie(a.ClientConfig), kubernetes.NewForConfigOrDie(b.ClientConfig)}
	nodePort := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Name: "a", Port: 80}}}}
	}

	// 14 usable addresses, the first held by the service "kubernetes".
	const n = 13
	var wg sync.WaitGroup
	got := make([]*corev1.Service, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = clients[i%2].CoreV1().Services("default").Create(ctx, nodePort(fmt.Sprintf("s%d", i)), metav1.CreateOptions{})
		}()
	}
	wg.Wait()
	ips, ports := map[string]bool{}, map[int32]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		ip, np := got[i].Spec.ClusterIP, got[i].Spec.Ports[0].NodePort
		if ips[ip] || ports[np] || !strings.HasPrefix(ip, "10.100.0.") {
			t.Errorf("service %d: cluster IP %s, node port %d (duplicate or out of range)", i, ip, np)
		}
		ips[ip], ports[np] = true, true
	}

	_, err := clients[0].CoreV1().Services("default").Create(ctx, nodePort("full"), metav1.CreateOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), `failed to allocate a serviceIP for Service "full": range is full`) {
		t.Fatalf("create in a full range: %v", err)
	}

	// A restart: a new server on the same etcd knows what is taken.
	a.Server.Stop()
	c := testserver.Start(t, testserver.WithEtcd(etcd.URL()), small)
	cc := kubernetes.NewForConfigOrDie(c.ClientConfig).CoreV1().Services("default")
	taken := got[0].Spec.ClusterIP
	req := nodePort("again")
	req.Spec.ClusterIP = taken
	_, err = cc.Create(ctx, req, metav1.CreateOptions{})
	wantInvalid(t, err, fmt.Sprintf(`spec.clusterIPs: Invalid value: ["%s"]: failed to allocate IP %s: provided IP is already allocated`, taken, taken))
	if err := cc.Delete(ctx, got[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := cc.Create(ctx, req, metav1.CreateOptions{})
	if err != nil || again.Spec.ClusterIP != taken {
		t.Fatalf("the released IP: %v %+v", err, again)
	}
}
