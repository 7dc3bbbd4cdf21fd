package etcd3_test

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcd3"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestLeaseReuse: a key created with a TTL gets a lease of the TTL plus
// the reuse window (kube's --lease-reuse-duration-seconds), and keys of
// the same TTL share it.
func TestLeaseReuse(t *testing.T) {
	etcd := etcdtest.Start(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		opts      []etcd3.Option
		wantGrant int64
	}{
		{"default", nil, 10 + int64(etcd3.DefaultLeaseReuse/time.Second)},
		{"five seconds", []etcd3.Option{etcd3.WithLeaseReuse(5 * time.Second)}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "/registry/" + tc.name
			st, _, err := etcd3.NewFactory(etcd.Client, tc.opts...)(storage.Config{Resource: "events", ResourcePrefix: prefix,
				NewFunc: func() runtime.Object { return &corev1.Event{} }})
			if err != nil {
				t.Fatal(err)
			}
			var leases []int64
			for _, name := range []string{"a", "b"} {
				ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
				if err := st.Create(ctx, prefix+"/ns/"+name, ev, &corev1.Event{}, 10); err != nil {
					t.Fatal(err)
				}
				resp, err := etcd.Client.Get(ctx, prefix+"/ns/"+name)
				if err != nil || len(resp.Kvs) != 1 {
					t.Fatalf("get: %v, %v", resp, err)
				}
				leases = append(leases, resp.Kvs[0].Lease)
			}
			if leases[0] != leases[1] {
				t.Errorf("leases %v: want one shared", leases)
			}
			ttl, err := etcd.Client.TimeToLive(ctx, clientLeaseID(leases[0]))
			if err != nil {
				t.Fatal(err)
			}
			if ttl.GrantedTTL != tc.wantGrant {
				t.Errorf("lease granted for %d s, want %d", ttl.GrantedTTL, tc.wantGrant)
			}
		})
	}
}

func clientLeaseID(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }
