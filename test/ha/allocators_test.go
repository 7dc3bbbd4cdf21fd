package ha

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAllocatorsAcrossReplicas creates Services through every replica at
// once, half of type NodePort, in a small service range: no cluster IP
// and no node port is handed out twice (the allocators reserve in etcd,
// by creating an IPAddress key only if absent and by compare-and-swap of
// the node ports' bitmap, with nothing in memory), and every replica
// lists every Service.
func TestAllocatorsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	ns := shared.createNamespace(t)
	perReplica := 12
	if testing.Short() {
		perReplica = 8
	}
	var wg sync.WaitGroup
	errs := make(chan error, replicas*perReplica)
	for r, client := range shared.clients {
		for i := range perReplica {
			wg.Go(func() {
				svc := &corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d-%d", r, i)},
					Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
				}
				if i%2 == 0 {
					svc.Spec.Type = corev1.ServiceTypeNodePort
				}
				if _, err := client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating %s through replica %d: %w", svc.Name, r, err)
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

	cidr := netip.MustParsePrefix(serviceRange)
	for r, client := range shared.clients {
		list, err := client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != replicas*perReplica {
			t.Errorf("replica %d lists %d services, want %d", r, len(list.Items), replicas*perReplica)
		}
		ips, ports := map[string]string{}, map[int32]string{}
		for _, svc := range list.Items {
			ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
			if err != nil || !cidr.Contains(ip) {
				t.Errorf("%s has cluster IP %q, not in %s", svc.Name, svc.Spec.ClusterIP, cidr)
			}
			if other, ok := ips[svc.Spec.ClusterIP]; ok {
				t.Errorf("%s and %s both have cluster IP %s", other, svc.Name, svc.Spec.ClusterIP)
			}
			ips[svc.Spec.ClusterIP] = svc.Name
			for _, p := range svc.Spec.Ports {
				if svc.Spec.Type != corev1.ServiceTypeNodePort {
					continue
				}
				if p.NodePort == 0 {
					t.Errorf("%s (NodePort) has no node port", svc.Name)
				}
				if other, ok := ports[p.NodePort]; ok {
					t.Errorf("%s and %s both have node port %d", other, svc.Name, p.NodePort)
				}
				ports[p.NodePort] = svc.Name
			}
		}
	}
}
