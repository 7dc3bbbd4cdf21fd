package apiserver

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestGracefulShutdown checks that stopping a server ends a watch in
// flight cleanly (the stream closes, no error event) and promptly.
func TestGracefulShutdown(t *testing.T) {
	own := testserver.Start(t)
	client := kubernetes.NewForConfigOrDie(own.ClientConfig)
	w, err := client.CoreV1().ConfigMaps("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := client.CoreV1().ConfigMaps("default").Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != "ADDED" {
		t.Fatalf("first event: %+v", ev)
	}
	stopped := make(chan struct{})
	start := time.Now()
	go func() { own.Server.Stop(); close(stopped) }()
	for ev := range w.ResultChan() {
		if ev.Type == "ERROR" {
			t.Errorf("the watch ended with an error event: %+v", ev.Object)
		}
	}
	select {
	case <-stopped:
	case <-time.After(own.Options.ShutdownTimeout + 10*time.Second):
		t.Fatal("the server did not stop")
	}
	if d := time.Since(start); d > own.Options.ShutdownTimeout {
		t.Errorf("shutdown took %v: the watch held it to its timeout", d)
	}
}

// TestProtobufBodies checks create and update with protobuf request
// bodies, as client-go sends them for built-in types.
func TestProtobufBodies(t *testing.T) {
	ns := namespace(t)
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	created, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "pb", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Data["k"] = "v2"
	updated, err := client.CoreV1().ConfigMaps(ns).Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, stored := getConfigMap(t, ns, "pb")
	if stored == nil || stored.Data["k"] != "v2" || stored.Labels["a"] != "b" || stored.ResourceVersion != updated.ResourceVersion {
		t.Errorf("stored: %+v", stored)
	}
	lease := `{"metadata":{"name":"l"},"spec":{"holderIdentity":"me"}}`
	if r := do(t, req{method: "POST", path: "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases", body: lease}); r.code != 201 {
		t.Errorf("lease: %d %s", r.code, r.body)
	}
}
