package apiserver

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestMetricsPerServer starts two servers in one process: the requests
// made to one are counted in its /metrics and not in the other's, and
// both serve the process's Go collectors.
func TestMetricsPerServer(t *testing.T) {
	a, b := testserver.Start(t), testserver.Start(t)
	get := func(ts *testserver.TestServer, method, path string) (int, string) {
		t.Helper()
		r, err := http.NewRequest(method, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ts.HTTPClient(t).Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for range 3 {
		if code, body := get(a, http.MethodDelete, "/api/v1/namespaces/default/podtemplates/nope"); code != http.StatusNotFound {
			t.Fatalf("DELETE podtemplates/nope: %d %s", code, body)
		}
	}
	const counted = `apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="podtemplates",scope="resource",subresource="",verb="DELETE",version="v1"} 3`
	const goCollector = "go_goroutines "
	_, metricsA := get(a, http.MethodGet, "/metrics")
	_, metricsB := get(b, http.MethodGet, "/metrics")
	if !strings.Contains(metricsA, counted) {
		t.Errorf("the server asked lacks %s", counted)
	}
	if strings.Contains(metricsB, `resource="podtemplates",scope="resource",subresource="",verb="DELETE"`) {
		t.Errorf("the other server counts the first one's requests:\n%s", grep(metricsB, "podtemplates"))
	}
	for name, m := range map[string]string{"first": metricsA, "second": metricsB} {
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
