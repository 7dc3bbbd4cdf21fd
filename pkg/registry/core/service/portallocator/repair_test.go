package portallocator_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func nodePortService(name string, ports ...int32) corev1.Service {
	svc := corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	for _, p := range ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Protocol: corev1.ProtocolTCP, NodePort: p})
	}
	return svc
}

// TestRepair: a port reserved for a service that was never written (a
// crash between the reservation and the write) is released by the third
// repair that finds it so, never before; a port a service holds is never
// released, and is reserved again when the bitmap lost it; a port reserved
// while a repair runs (a create under way) survives that repair.
func TestRepair(t *testing.T) {
	etcd := etcdtest.Start(t)
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/registry"}
	a, release, err := portallocator.NewFromOptions(utilnet.PortRange{Base: 30000, Size: 16}, getter)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx := context.Background()
	for _, port := range []int{30001, 30002} { // 30001: never written
		if err := a.Allocate(ctx, port); err != nil {
			t.Fatal(err)
		}
	}
	services := []corev1.Service{nodePortService("held", 30002), nodePortService("lost", 30005)}
	list := func(context.Context) ([]corev1.Service, error) { return services, nil }
	has := func(port int) bool {
		t.Helper()
		ok, err := a.Has(ctx, port)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	r := portallocator.NewRepair(a)
	for run := 1; run <= 3; run++ {
		if err := r.RunOnce(ctx, list); err != nil {
			t.Fatal(err)
		}
		if leaked := has(30001); leaked != (run < 3) {
			t.Errorf("after repair %d, 30001 (reserved, no service) reserved: %v; want released by the third", run, leaked)
		}
		for _, port := range []int{30002, 30005} {
			if !has(port) {
				t.Errorf("after repair %d, %d (held by a service) is not reserved", run, port)
			}
		}
	}

	// A create reserves 30009 after the repair read the bitmap, and
	// writes its service after the repair listed the services: the
	// repair's write (it reserves 30007 again) does not undo the
	// reservation.
	services = append(services, nodePortService("lost-too", 30007))
	r = portallocator.NewRepair(a)
	racing := func(ctx context.Context) ([]corev1.Service, error) {
		if !has(30009) {
			if err := a.Allocate(ctx, 30009); err != nil {
				return nil, err
			}
		}
		return services, nil
	}
	for range 3 {
		if err := r.RunOnce(ctx, racing); err != nil {
			t.Fatal(err)
		}
		if !has(30009) || !has(30007) {
			t.Fatalf("after a repair racing a create: 30009 (reserved by the create) %v, 30007 (held by a service) %v; want both reserved", has(30009), has(30007))
		}
		services = append(services, nodePortService("created", 30009))
	}
}
