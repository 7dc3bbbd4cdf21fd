package storagefmt

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestOldLayoutMoved: what earlier versions of this server stored as JSON
// under <prefix>/<resource> (services, endpoints, nodes) is moved to
// kube-apiserver's keys when the server starts, and served from there.
func TestOldLayoutMoved(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	old := map[string]any{
		"/registry/namespaces/old": &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta("", "old"),
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		"/registry/services/old/svc":  kubeObjects()["/registry/services/specs/from-kube/svc"],
		"/registry/endpoints/old/svc": &corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}, ObjectMeta: meta("old", "svc")},
		"/registry/nodes/old-node":    &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: meta("", "old-node")},
	}
	old["/registry/services/old/svc"].(*corev1.Service).Namespace = "old"
	for key, obj := range old {
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := etcd.Client.Put(ctx, key, string(data)); err != nil {
			t.Fatal(err)
		}
	}
	ts := testserver.Start(t, testserver.WithEtcd(etcd.URL()))
	c := clients(t, ts)["protobuf"]
	if _, err := c.CoreV1().Services("old").Get(ctx, "svc", metav1.GetOptions{}); err != nil {
		t.Errorf("GET the old service: %v", err)
	}
	if _, err := c.CoreV1().Endpoints("old").Get(ctx, "svc", metav1.GetOptions{}); err != nil {
		t.Errorf("GET the old endpoints: %v", err)
	}
	if _, err := c.CoreV1().Nodes().Get(ctx, "old-node", metav1.GetOptions{}); err != nil {
		t.Errorf("GET the old node: %v", err)
	}
	for _, gone := range []string{"/registry/services/old/", "/registry/endpoints/", "/registry/nodes/"} {
		if resp, err := etcd.Client.Get(ctx, gone, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || resp.Count != 0 {
			t.Errorf("%d keys left under %s (%v)", resp.Count, gone, err)
		}
	}
	for _, moved := range []string{"/registry/services/specs/old/svc", "/registry/services/endpoints/old/svc", "/registry/minions/old-node"} {
		if resp, err := etcd.Client.Get(ctx, moved, clientv3.WithCountOnly()); err != nil || resp.Count != 1 {
			t.Errorf("%s: %d keys (%v), want the moved object", moved, resp.Count, err)
		}
	}
}
