package apiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestWatchOfOneObjectOutlivesRequestTimeout is issue 12's defect: the
// request info decides once what is a watch, so that a watch of one
// object is long-running (no --request-timeout), and GET NAME?watch=true
// is what kube-apiserver 1.37.2 makes of it: a get of the object
// (before, it was served as a watch cut after the request timeout).
func TestWatchOfOneObjectOutlivesRequestTimeout(t *testing.T) {
	t.Parallel()
	const requestTimeout = time.Second
	ts := testserver.Start(t, func(o *app.Options) { o.RequestTimeout = requestTimeout })
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	ns := ts.CreateNamespace(t)
	ctx := context.Background()
	cms := client.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	base := ts.URL + "/api/v1/namespaces/" + ns + "/configmaps"

	t.Run("get with watch=true is a get", func(t *testing.T) {
		resp := get(t, ts, base+"/c?watch=true&timeoutSeconds=15")
		body, _ := io.ReadAll(resp.Body)
		var cm corev1.ConfigMap
		if err := json.Unmarshal(body, &cm); err != nil || cm.Kind != "ConfigMap" || cm.Name != "c" {
			t.Fatalf("got %d %s, want the ConfigMap", resp.StatusCode, body)
		}
	})

	// Each watch below must still deliver an event made after the request
	// timeout has passed.
	modify := func(t *testing.T, value string) {
		time.Sleep(2 * requestTimeout)
		if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Data: map[string]string{"v": value}}, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("legacy watch path", func(t *testing.T) {
		resp := get(t, ts, ts.URL+"/api/v1/watch/namespaces/"+ns+"/configmaps/c?timeoutSeconds=30")
		events := make(chan watch.EventType, 10)
		go func() {
			defer close(events)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				var ev struct{ Type watch.EventType }
				if json.Unmarshal(sc.Bytes(), &ev) == nil {
					events <- ev.Type
				}
			}
		}()
		if ev := <-events; ev != watch.Added {
			t.Fatalf("first event %q", ev)
		}
		modify(t, "legacy")
		if ev := <-events; ev != watch.Modified {
			t.Fatalf("after the request timeout: event %q, want MODIFIED (an empty one: the watch ended)", ev)
		}
	})
	t.Run("field selector", func(t *testing.T) {
		timeout := int64(30)
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "c").String(), TimeoutSeconds: &timeout})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		if ev := <-w.ResultChan(); ev.Type != watch.Added {
			t.Fatalf("first event %v", ev)
		}
		modify(t, "selector")
		if ev := <-w.ResultChan(); ev.Type != watch.Modified {
			t.Fatalf("after the request timeout: event %v, want MODIFIED (the watch ended)", ev)
		}
	})
}

// get sends an authenticated GET to the test server; the caller gets the
// open response (closed at cleanup).
func get(t *testing.T, ts *testserver.TestServer, url string) *http.Response {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := ts.HTTPClient(t)
	client.Timeout = 30 * time.Second
	resp, err := client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return resp
}

// TestWatchTimeoutSecondsOverflow: timeoutSeconds past what a duration
// holds (2^63-1 seconds) is the longest watch, not a deadline already
// past: 200 and the events (it answered 500 "context deadline exceeded").
func TestWatchTimeoutSecondsOverflow(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	createConfigMap(t, ns, "c", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet,
		srv.URL+"/api/v1/namespaces/"+ns+"/configmaps?watch=1&timeoutSeconds=9223372036854775807", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient(t).Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("%d: no event (%v)", resp.StatusCode, sc.Err())
	}
	var ev struct {
		Type   watch.EventType
		Object corev1.ConfigMap
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); resp.StatusCode != http.StatusOK || err != nil || ev.Type != watch.Added || ev.Object.Name != "c" {
		t.Fatalf("got %d %s, want 200 and the ADDED event of c", resp.StatusCode, sc.Bytes())
	}
}
