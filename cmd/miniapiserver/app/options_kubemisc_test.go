package app

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// TestPermitPortSharing: with --permit-port-sharing a second listener
// binds the secure port's address beside the first (SO_REUSEPORT, as
// kube); without it, it cannot.
func TestPermitPortSharing(t *testing.T) {
	shared := ServingOptions{PermitPortSharing: true, PermitAddressSharing: true}
	first, err := shared.listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	addr := first.Addr().String()
	second, err := shared.listen(addr)
	if err != nil {
		t.Fatalf("a second listener with --permit-port-sharing: %v", err)
	}
	second.Close()
	var plain ServingOptions
	if ln, err := plain.listen(addr); err == nil {
		ln.Close()
		t.Fatal("a second listener without --permit-port-sharing bound the port")
	}
	if _, err := net.Listen("tcp", addr); err == nil {
		t.Fatal("net.Listen bound a port the first listener holds")
	}
}

// notReady is a store whose watch cache never gets its first list.
type notReady struct{ rest.Storage }

func (notReady) StorageReadiness() error { return errors.New("not yet") }

// TestStorageInitializationTimeout: the watch caches' check fails until
// they are ready, or until --storage-initialization-timeout has passed.
func TestStorageInitializationTimeout(t *testing.T) {
	groups := []rest.APIGroupInfo{{GroupName: "g", PrioritizedVersions: []string{"v1"},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{"v1": {"things": notReady{}}}}}
	if err := watchCacheCheck(groups, time.Hour).Fn(context.Background()); err == nil {
		t.Error("ready within the timeout, with a cache not ready")
	}
	if err := watchCacheCheck(groups, 0).Fn(context.Background()); err != nil {
		t.Errorf("not ready after the timeout: %v", err)
	}
}

// TestKubeletPort: --kubelet-port is the kubelet client's port of nodes
// that publish none.
func TestKubeletPort(t *testing.T) {
	o := NewOptions()
	if got := o.Kubelet.config().Port; got != 10250 {
		t.Errorf("default port %d, want kube's 10250", got)
	}
	o.Kubelet.Port = 10251
	if got := o.Kubelet.config().Port; got != 10251 {
		t.Errorf("port %d, want 10251", got)
	}
}
