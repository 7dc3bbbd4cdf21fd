package etcd

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// TestExternalEtcdOverTLS: with kube's TLS flags the server stores in an
// etcd that takes only clients with a certificate of its CA, though the
// first member listed is down (the client fails over to the next), and
// events go to the etcd --etcd-servers-overrides names (over the same TLS
// files), as kubeadm clusters split events off: they are written there
// and only there, and read back from there.
func TestExternalEtcdOverTLS(t *testing.T) {
	t.Parallel()
	p := newPKI(t, t.TempDir())
	mainEtcd, eventsEtcd := startTLSEtcd(t, p), startTLSEtcd(t, p)
	srv := testserver.Start(t, testserver.WithEtcd(closedURL(t), mainEtcd.ClientURL()), func(o *app.Options) {
		o.EtcdClient.CAFile, o.EtcdClient.CertFile, o.EtcdClient.KeyFile = p.CAFile, p.CertFile, p.KeyFile
		o.EtcdClient.ServersOverrides = []string{"/events#" + closedURL(t) + ";" + eventsEtcd.ClientURL()}
	})
	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
	ns := srv.CreateNamespace(t)
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: "cm"},
		Reason:         "Tested", Message: "stored on the events etcd", Type: corev1.EventTypeNormal,
	}
	if _, err := client.CoreV1().Events(ns).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mainClient, eventsClient := etcdClient(t, mainEtcd.ClientURL(), p.TLSFiles), etcdClient(t, eventsEtcd.ClientURL(), p.TLSFiles)
	want := []struct {
		etcd string
		got  int64
		key  string
		want int64
	}{
		{"main", keys(t, mainClient, "/registry/configmaps/"+ns+"/cm"), "configmap", 1},
		{"main", keys(t, mainClient, "/registry/events/"), "events", 0},
		{"events", keys(t, eventsClient, "/registry/events/"+ns+"/ev"), "event", 1},
		{"events", keys(t, eventsClient, "/registry/configmaps/"), "configmaps", 0},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("the %s etcd holds %d keys of the %s, want %d", w.etcd, w.got, w.key, w.want)
		}
	}
	// events.k8s.io serves the same store: the event is read from there.
	if got, err := client.EventsV1().Events(ns).Get(ctx, "ev", metav1.GetOptions{}); err != nil || got.Note != event.Message {
		t.Errorf("events.k8s.io/v1 get: %v, %v", got, err)
	}
	code, body := get(t, srv, "/readyz?verbose")
	for _, line := range []string{"[+]etcd ok", "[+]etcd-readiness ok", "[+]etcd-override-0 ok", "[+]etcd-override-readiness-0 ok"} {
		if code != 200 || !strings.Contains(body, line) {
			t.Errorf("/readyz?verbose: %d, want %q in:\n%s", code, line, body)
		}
	}
}

// TestEtcdCheckTimeouts: with etcd gone, /livez's etcd check and /readyz's
// etcd-readiness fail within --etcd-healthcheck-timeout and
// --etcd-readycheck-timeout (kube's default, 2 s, would hold every probe
// that long).
func TestEtcdCheckTimeouts(t *testing.T) {
	t.Parallel()
	etcd := etcdtest.Start(t)
	srv := testserver.Start(t, testserver.WithEtcd(etcd.URL()), func(o *app.Options) {
		o.EtcdClient.HealthcheckTimeout = 200 * time.Millisecond
		o.EtcdClient.ReadycheckTimeout = 300 * time.Millisecond
	})
	etcd.Stop()
	defer etcd.Restart() // the server stops cleanly
	for _, tc := range []struct{ path, failed string }{
		{"/livez?verbose", "[-]etcd failed"},
		{"/readyz?verbose", "[-]etcd-readiness failed"},
	} {
		start := time.Now()
		code, body := get(t, srv, tc.path)
		if took := time.Since(start); took > 1500*time.Millisecond {
			t.Errorf("%s took %v with etcd down, want about its check's timeout", tc.path, took)
		}
		if code != 500 || !strings.Contains(body, tc.failed) {
			t.Errorf("%s: %d, want 500 with %q in:\n%s", tc.path, code, tc.failed, body)
		}
	}
}
