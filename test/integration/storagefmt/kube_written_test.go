// Package storagefmt tests that this server serves what kube-apiserver
// v1.37.2 writes to etcd (built-in objects as protobuf at kube's keys, the
// key layout of every resource) and writes what kube reads, through the
// real HTTP API with JSON and protobuf clients.
package storagefmt

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// kubeProtobuf returns what kube-apiserver stores for obj by default: its
// protobuf serializer's envelope, "k8s\x00" + runtime.Unknown.
func kubeProtobuf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(api.Scheme(), api.Scheme()).Encode(obj, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), Labels: map[string]string{"written-by": "kube"}}
}

// kubeObjects are objects as kube-apiserver v1.37.2 writes them: the
// default ServiceCIDR (whose protobuf value made this server exit at
// start), and objects at kube's historical keys.
func kubeObjects() map[string]runtime.Object {
	return map[string]runtime.Object{
		"/registry/servicecidrs/kubernetes": &networkingv1.ServiceCIDR{
			TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "ServiceCIDR"}, ObjectMeta: meta("", "kubernetes"),
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{app.NewOptions().ServiceClusterIPRange}}},
		"/registry/namespaces/from-kube": &corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: meta("", "from-kube"),
			Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
		"/registry/configmaps/from-kube/cm": &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta("from-kube", "cm"), Data: map[string]string{"k": "v"}},
		"/registry/services/specs/from-kube/svc": &corev1.Service{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("from-kube", "svc"),
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"},
				Ports: []corev1.ServicePort{{Name: "p", Port: 80, Protocol: corev1.ProtocolTCP}}, SessionAffinity: corev1.ServiceAffinityNone,
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr(corev1.IPFamilyPolicySingleStack),
				InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster)}},
		"/registry/services/endpoints/from-kube/svc": &corev1.Endpoints{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}, ObjectMeta: meta("from-kube", "svc")},
		"/registry/minions/node-from-kube": &corev1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: meta("", "node-from-kube")},
	}
}

func ptr[T any](v T) *T { return &v }

// startOverKubeData writes kubeObjects into a fresh etcd, then starts the
// server over it.
func startOverKubeData(t *testing.T, opts ...testserver.Option) (*testserver.TestServer, *etcdtest.Etcd) {
	etcd := etcdtest.Start(t)
	for key, obj := range kubeObjects() {
		if _, err := etcd.Client.Put(context.Background(), key, kubeProtobuf(t, obj)); err != nil {
			t.Fatal(err)
		}
	}
	return testserver.Start(t, append(opts, testserver.WithEtcd(etcd.URL()))...), etcd
}

func clients(t *testing.T, ts *testserver.TestServer) map[string]*kubernetes.Clientset {
	t.Helper()
	out := map[string]*kubernetes.Clientset{}
	for name, ct := range map[string]string{"json": runtime.ContentTypeJSON, "protobuf": runtime.ContentTypeProtobuf} {
		cfg := rest.CopyConfig(ts.ClientConfig)
		cfg.ContentType, cfg.AcceptContentTypes = ct, ct
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	return out
}

// TestServesKubeWrittenObjects: the server starts over kube's protobuf
// values (its default ServiceCIDR among them) and serves them at kube's
// keys to JSON and protobuf clients through GET, LIST (from the watch
// cache and from etcd) and WATCH.
func TestServesKubeWrittenObjects(t *testing.T) {
	t.Parallel()
	ts, _ := startOverKubeData(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, c := range clients(t, ts) {
		t.Run(name, func(t *testing.T) {
			svc, err := c.CoreV1().Services("from-kube").Get(ctx, "svc", metav1.GetOptions{})
			if err != nil || svc.Labels["written-by"] != "kube" || svc.Spec.Ports[0].Port != 80 || svc.ResourceVersion == "" {
				t.Errorf("GET service: %+v, %v", svc, err)
			}
			if _, err := c.CoreV1().Endpoints("from-kube").Get(ctx, "svc", metav1.GetOptions{}); err != nil {
				t.Errorf("GET endpoints: %v", err)
			}
			if _, err := c.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{}); err != nil {
				t.Errorf("GET servicecidr: %v", err)
			}
			for _, rv := range []string{"", "0"} { // from etcd, from the cache
				nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: "written-by=kube"})
				if err != nil || len(nodes.Items) != 1 || nodes.Items[0].Name != "node-from-kube" {
					t.Errorf("LIST nodes at %q: %v, %v", rv, nodes, err)
				}
				svcs, err := c.CoreV1().Services("").List(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: "written-by=kube"})
				if err != nil || len(svcs.Items) != 1 {
					t.Errorf("LIST services at %q: %v, %v (kube's endpoints must not be listed as services)", rv, svcs, err)
				}
			}
			w, err := c.CoreV1().ConfigMaps("from-kube").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			select {
			case ev := <-w.ResultChan():
				if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Data["k"] != "v" {
					t.Errorf("WATCH: %s %#v", ev.Type, ev.Object)
				}
			case <-ctx.Done():
				t.Fatal("no watch event")
			}
		})
	}
}

// TestUpdatesKubeWrittenObjects: an update through this server leaves the
// object at kube's key, as protobuf (the default media type), where kube
// reads it; a JSON server (--storage-media-type=application/json) writes
// JSON at the same key.
func TestUpdatesKubeWrittenObjects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mediaType string
		prefix    string
	}{
		{"application/vnd.kubernetes.protobuf", "k8s\x00"},
		{"application/json", "{"},
	} {
		t.Run(tc.mediaType, func(t *testing.T) {
			t.Parallel()
			ts, etcd := startOverKubeData(t, func(o *app.Options) { o.StorageMediaType = tc.mediaType })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c := clients(t, ts)["json"]
			svc, err := c.CoreV1().Services("from-kube").Get(ctx, "svc", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			svc.Labels["updated-by"] = "mini"
			if _, err := c.CoreV1().Services("from-kube").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-from-mini"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{
				"/registry/services/specs/from-kube/svc": "updated-by",
				"/registry/minions/node-from-mini":       "node-from-mini",
			} {
				resp, err := etcd.Client.Get(ctx, key)
				if err != nil || len(resp.Kvs) != 1 {
					t.Fatalf("%s: %v, %v", key, resp, err)
				}
				v := resp.Kvs[0].Value
				if !bytes.HasPrefix(v, []byte(tc.prefix)) || !bytes.Contains(v, []byte(want)) {
					t.Errorf("%s holds %q, want %q... with %q", key, v, tc.prefix, want)
				}
			}
		})
	}
}
