package apiserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestMetricsPerServer starts two servers in one process: the requests
// made to one, and the events its watch cache gets, are counted in its
// /metrics and not in the other's; each reports its own etcd's size; both
// serve the process's Go collectors.
func TestMetricsPerServer(t *testing.T) {
	a, b := testserver.Start(t), testserver.Start(t)
	send := func(ts *testserver.TestServer, method, path string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"counted"},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`)
		}
		r, err := http.NewRequest(method, ts.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		resp, err := ts.HTTPClient(t).Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	for range 3 {
		if code, body := send(a, http.MethodDelete, "/api/v1/namespaces/default/podtemplates/nope"); code != http.StatusNotFound {
			t.Fatalf("DELETE podtemplates/nope: %d %s", code, body)
		}
	}
	if code, body := send(a, http.MethodPost, "/api/v1/namespaces/default/podtemplates"); code != http.StatusCreated {
		t.Fatalf("POST podtemplates: %d %s", code, body)
	}
	const received = `apiserver_watch_cache_events_received_total{group="",resource="podtemplates"} `
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, m := send(a, http.MethodGet, "/metrics")
		if strings.Contains(m, received+"1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server asked never counts its cache's event:\n%s", grep(m, "podtemplates"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	const counted = `apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="podtemplates",scope="resource",subresource="",verb="DELETE",version="v1"} 3`
	const goCollector = "go_goroutines "
	_, metricsA := send(a, http.MethodGet, "/metrics")
	_, metricsB := send(b, http.MethodGet, "/metrics")
	if !strings.Contains(metricsA, counted) {
		t.Errorf("the server asked lacks %s", counted)
	}
	if strings.Contains(metricsB, `resource="podtemplates",scope="resource",subresource="",verb="DELETE"`) {
		t.Errorf("the other server counts the first one's requests:\n%s", grep(metricsB, "podtemplates"))
	}
	if strings.Contains(metricsB, received) && !strings.Contains(metricsB, received+"0\n") {
		t.Errorf("the other server counts the first one's cache events:\n%s", grep(metricsB, received))
	}
	for name, m := range map[string]string{"first": metricsA, "second": metricsB} {
		if strings.Contains(m, `storage_cluster_id="etcd-1"`) {
			t.Errorf("the %s server reports another server's etcd:\n%s", name, grep(m, "storage_cluster_id"))
		}
		if !strings.Contains(m, goCollector) {
			t.Errorf("the %s server's /metrics lacks the Go collector (%s)", name, goCollector)
		}
	}
}

// grep is the lines of s that contain sub.
func grep(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
