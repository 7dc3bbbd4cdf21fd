package portallocator_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core/service/portallocator"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, etcdtest.IgnoredGoroutines()...) }

// TestAllocator: ports are reserved once, a range fills up, a release
// frees, and an allocator over another range of the same bitmap sees the
// ports they share.
func TestAllocator(t *testing.T) {
	etcd := etcdtest.Start(t)
	getter := generic.UndecoratedRESTOptions{Factory: etcd3.NewFactory(etcd.Client), Prefix: "/registry"}
	ports := utilnet.PortRange{Base: 30000, Size: 4}
	a, release, err := portallocator.NewFromOptions(ports, getter)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx := context.Background()

	if err := a.Allocate(ctx, 30001); err != nil {
		t.Fatal(err)
	}
	if err := a.Allocate(ctx, 30001); !errors.Is(err, portallocator.ErrAllocated) {
		t.Errorf("allocating a taken port: %v, want ErrAllocated", err)
	}
	var notInRange portallocator.NotInRangeError
	if err := a.Allocate(ctx, 30004); !errors.As(err, &notInRange) {
		t.Errorf("allocating a port out of the range: %v, want NotInRangeError", err)
	}
	seen := map[int]bool{30001: true}
	for i := range 3 {
		port, err := a.AllocateNext(ctx)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[port] || port < 30000 || port > 30003 {
			t.Fatalf("allocation %d: %d, taken or out of range", i, port)
		}
		seen[port] = true
	}
	if _, err := a.AllocateNext(ctx); !errors.Is(err, portallocator.ErrFull) {
		t.Errorf("allocating from a full range: %v, want ErrFull", err)
	}
	if err := a.Release(ctx, 30001, 40000); err != nil {
		t.Fatal(err)
	}
	if has, err := a.Has(ctx, 30001); err != nil || has {
		t.Errorf("after its release, Has(30001) = %v, %v", has, err)
	}

	// A restart with a wider range keeps what the bitmap holds.
	wider, releaseWider, err := portallocator.NewFromOptions(utilnet.PortRange{Base: 29999, Size: 10}, getter)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseWider()
	for port, want := range map[int]bool{29999: false, 30000: true, 30001: false, 30003: true} {
		if has, err := wider.Has(ctx, port); err != nil || has != want {
			t.Errorf("wider range: Has(%d) = %v, %v; want %v", port, has, err, want)
		}
	}
}
