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

// TestAdmissionMetrics: kube's admission latency metrics count each pass
// of the mutating and validating steps and each plugin's part, with the
// operation and whether it rejected the request: both creates pass the
// mutating step; NamespaceLifecycle, a validating plugin, refuses the one
// in a namespace that does not exist, and no plugin after it runs.
func TestAdmissionMetrics(t *testing.T) {
	ts := testserver.Start(t)
	client := ts.HTTPClient(t)
	post := func(ns string) int {
		t.Helper()
		body := strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"m"}}`)
		resp, err := client.Post(ts.URL+"/api/v1/namespaces/"+ns+"/configmaps", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("default"); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if code := post("missing"); code != http.StatusNotFound {
		t.Fatalf("create in a missing namespace: %d, want 404", code)
	}
	resp, err := client.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	m := string(data)
	if strings.Contains(m, `name="ResourceQuota",operation="CREATE",rejected="true"`) {
		t.Errorf("a plugin after the one that refused ran:\n%s", grep(m, `name="ResourceQuota"`))
	}
	for _, want := range []string{
		`apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="false",type="admit"} 2`,
		`apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="false",type="validate"} 1`,
		`apiserver_admission_step_admission_duration_seconds_count{operation="CREATE",rejected="true",type="validate"} 1`,
		`apiserver_admission_step_admission_duration_seconds_summary_count{operation="CREATE",rejected="true",type="validate"} 1`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="NamespaceLifecycle",operation="CREATE",rejected="true",type="validate"} 1`,
		`apiserver_admission_controller_admission_duration_seconds_count{name="ResourceQuota",operation="CREATE",rejected="false",type="validate"} 1`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("/metrics lacks %s:\n%s", want, grep(m, "admission_duration_seconds_count"))
		}
	}
}
