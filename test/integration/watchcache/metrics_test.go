package watchcache

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestWatchCacheMetrics: /metrics has the watch cache's metrics under
// kube's names, labelled by resource, once a watch has seen an event.
func TestWatchCacheMetrics(t *testing.T) {
	srv := testserver.Start(t)
	h := &httpClient{t: t, srv: srv, c: srv.HTTPClient(t)}
	cms := kubernetes.NewForConfigOrDie(srv.ClientConfig).CoreV1().ConfigMaps("default")
	// From the current revision: the namespace already holds
	// kube-root-ca.crt, as every namespace does.
	list, err := cms.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The server's own loops watch config maps too (the legacy token
	// tracking controller): the test's watch is one more.
	const registered = `apiserver_registered_watchers{group="",resource="configmaps"} `
	before := metricValue(t, string(h.get("/metrics").body), registered)
	w := h.watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + list.ResourceVersion)
	defer w.close()
	if _, err := cms.Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.expect("ADDED m")
	body := string(h.get("/metrics").body)
	after := metricValue(t, body, registered)
	if after < before+1 {
		t.Errorf("%s%d with the test's watch, %d before it", registered, after, before)
	}
	w.close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n := metricValue(t, string(h.get("/metrics").body), registered)
		if n == after-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%d after the test's watch ended, %d while it was open", registered, n, after)
		}
	}
	for _, want := range []string{
		`apiserver_watch_cache_events_received_total{group="",resource="configmaps"}`,
		`apiserver_watch_cache_capacity{group="",resource="configmaps"}`,
		`apiserver_watch_cache_resource_version{group="",resource="configmaps"}`,
		`apiserver_terminated_watchers_total`,
		`apiserver_watch_events_total{group="",resource="configmaps",version="v1"}`,
		`apiserver_watch_events_sizes_bucket{group="",resource="configmaps",version="v1",le="1024"}`,
		`apiserver_storage_objects{resource="configmaps"}`,
		`apiserver_watch_cache_read_wait_seconds_bucket`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
}

// metricValue is the integer value of the series whose line starts with
// prefix (0 when there is none).
func metricValue(t *testing.T, body, prefix string) int {
	t.Helper()
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("%s%s: %v", prefix, v, err)
			}
			return n
		}
	}
	return 0
}
