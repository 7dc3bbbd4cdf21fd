package auth

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// withoutAPF limits by the plain in-flight limits, as
// --enable-priority-and-fairness=false does, to one read at a time.
func withoutAPF(o *app.Options) {
	o.Auth.EnablePriorityAndFairness = false
	o.Auth.MaxRequestsInflight = 1
}

// TestInFlightLimitIsFair floods a server limited to one read at a time
// (API Priority and Fairness off) from one user: the flood gets kube's 429 (its queue overflows), while
// another user's reads, made meanwhile, all succeed (each freed place
// goes to the users waiting in turn).
func TestInFlightLimitIsFair(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, withoutAPF, alwaysAllow)
	flooder, bystander := httpClientOf(t, ts.ClientConfigFor(t, "flooder")), httpClientOf(t, ts.ClientConfigFor(t, "bystander"))
	url := ts.URL + "/api/v1/namespaces/default/configmaps"
	// Each client's connection is made before the flood: the test is
	// about the places a request waits for, not about TLS handshakes on a
	// busy machine (both clients then send over their one HTTP/2
	// connection).
	for _, c := range []*http.Client{flooder, bystander} {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}

	const floodWorkers, floodRequests = 120, 10 // more workers than a user's queue holds (50)
	var tooMany, ok429Body atomic.Int64
	var floodErr atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < floodWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < floodRequests; i++ {
				resp, err := flooder.Get(url)
				if err != nil {
					floodErr.Store(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					tooMany.Add(1)
					if string(body) == "Too many requests, please try again later.\n" && resp.Header.Get("Retry-After") == "1" {
						ok429Body.Add(1)
					}
				}
			}
		}()
	}
	failures := 0
	for i := 0; i < 20; i++ {
		resp, err := bystander.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			failures++
		}
	}
	wg.Wait()
	if err := floodErr.Load(); err != nil {
		t.Fatal(err)
	}
	if failures > 0 {
		t.Errorf("%d of the other user's 20 reads failed during the flood", failures)
	}
	if resp, err := bystander.Get(url); err == nil {
		resp.Body.Close()
		if uid := resp.Header.Get("X-Kubernetes-PF-FlowSchema-UID"); uid != "" {
			t.Errorf("without priority and fairness, a response names flow schema %s", uid)
		}
	}
	if tooMany.Load() == 0 || ok429Body.Load() != tooMany.Load() {
		t.Errorf("the flood got %d 429s, %d of them with kube's body and Retry-After", tooMany.Load(), ok429Body.Load())
	}
	metrics := getMetrics(t, ts)
	for _, want := range []string{`apiserver_dropped_requests_total{request_kind="readOnly"}`, `apiserver_current_inflight_requests{request_kind="readOnly"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestInFlightExempt: system:masters and watches are not limited.
func TestInFlightExempt(t *testing.T) {
	t.Parallel()
	ts := testserver.Start(t, withoutAPF, alwaysAllow)
	// A watch holds no place: reads go on while it is open.
	watcher := httpClientOf(t, ts.ClientConfigFor(t, "watcher"))
	resp, err := watcher.Get(ts.URL + "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=30")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reader := httpClientOf(t, ts.ClientConfigFor(t, "reader"))
	for i := 0; i < 5; i++ {
		r, err := reader.Get(ts.URL + "/api/v1/namespaces/default/configmaps")
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("a read beside an open watch: %d", r.StatusCode)
		}
	}
}

func httpClientOf(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func getMetrics(t *testing.T, ts *testserver.TestServer) string {
	t.Helper()
	resp, err := ts.HTTPClient(t).Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
