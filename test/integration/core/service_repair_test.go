package core

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestNodePortRepair leaks a node port as a server crashing between the
// reservation and the write of its service would (the service's key is
// removed from etcd: the port stays reserved, no service holds it): the
// repair loop releases it, and a service may then ask for it. A port a
// service holds is never released.
func TestNodePortRepair(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, func(o *app.Options) { o.ServiceNodePortRepairInterval = 100 * time.Millisecond })
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := ts.CreateNamespace(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	leaky, err := createNodePort(ctx, client, ns, "leaky", 0)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := createNodePort(ctx, client, ns, "kept", 0)
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{ts.Server.EtcdURL}, TLS: ts.Server.EtcdTLS, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer etcd.Close()
	keys, err := etcd.Get(ctx, "/registry/services/specs/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	for _, kv := range keys.Kvs {
		if strings.HasSuffix(string(kv.Key), "/"+ns+"/leaky") {
			if _, err := etcd.Delete(ctx, string(kv.Key)); err != nil {
				t.Fatal(err)
			}
			removed = true
		}
	}
	if !removed {
		t.Fatalf("no key of service %s/leaky among %d under /registry/services/specs/", ns, len(keys.Kvs))
	}

	// Released by the third repair that finds it leaked: a service asking
	// for it is refused until then.
	port := leaky.Spec.Ports[0].NodePort
	for {
		_, err := createNodePort(ctx, client, ns, "reuse", port)
		if err == nil {
			break
		}
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is already allocated") {
			t.Fatalf("creating a service with the leaked port %d: %v", port, err)
		}
		if ctx.Err() != nil {
			t.Fatalf("the leaked port %d was not released in time", port)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Many repairs later, the port held by a service is still reserved.
	time.Sleep(time.Second)
	if _, err := createNodePort(ctx, client, ns, "steal", kept.Spec.Ports[0].NodePort); !apierrors.IsInvalid(err) {
		t.Errorf("creating a service with the port %d another service holds: %v, want Invalid (already allocated)", kept.Spec.Ports[0].NodePort, err)
	}
}

func createNodePort(ctx context.Context, client kubernetes.Interface, ns, name string, nodePort int32) (*corev1.Service, error) {
	return client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Port: 80, NodePort: nodePort}},
		},
	}, metav1.CreateOptions{})
}
