// Package watchcache tests the watch cache through the HTTP API: the
// resourceVersion semantics of lists and watches, and client-go informers,
// against servers with and without the cache.
package watchcache

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/pkg/storage/etcdtest"
)

// configurations the API tests run against: the same answers with the
// cache on, off, and off for configmaps only.
var configurations = []struct {
	name string
	opt  testserver.Option
}{
	{"watch cache", func(*app.Options) {}},
	{"no watch cache", func(o *app.Options) { o.WatchCache = false }},
	{"configmaps uncached", func(o *app.Options) { o.WatchCacheSizes = []string{"configmaps#0"} }},
}

func TestResourceVersionSemantics(t *testing.T) {
	for _, cfg := range configurations {
		t.Run(cfg.name, func(t *testing.T) {
			etcd := etcdtest.Start(t)
			srv := testserver.Start(t, testserver.WithEtcd(etcd.URL()), cfg.opt)
			client := kubernetes.NewForConfigOrDie(srv.ClientConfig)
			h := &httpClient{t: t, srv: srv, c: srv.HTTPClient(t)}
			ctx := context.Background()
			cms := client.CoreV1().ConfigMaps("default")
			first, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}

			t.Run("consistent list sees the write", func(t *testing.T) {
				list, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil || len(list.Items) != 1 || list.ResourceVersion < first.ResourceVersion {
					t.Fatalf("list: %v, %d items at %s", err, len(list.Items), list.ResourceVersion)
				}
			})
			t.Run("list at resourceVersion 0", func(t *testing.T) {
				// Any state: after the consistent list above, it has the write.
				list, err := cms.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
				if err != nil || len(list.Items) != 1 {
					t.Fatalf("list: %v, %+v", err, list)
				}
			})
			t.Run("list at a future resourceVersion is 504 with Retry-After", func(t *testing.T) {
				rv, _ := strconv.ParseInt(first.ResourceVersion, 10, 64)
				resp := h.get("/api/v1/namespaces/default/configmaps?resourceVersion=" + strconv.FormatInt(rv+10000, 10))
				if resp.code != http.StatusGatewayTimeout || resp.header.Get("Retry-After") != "1" {
					t.Fatalf("got %d (Retry-After %q): %s", resp.code, resp.header.Get("Retry-After"), resp.body)
				}
				var status metav1.Status
				if err := json.Unmarshal(resp.body, &status); err != nil || status.Reason != metav1.StatusReasonTimeout ||
					status.Details == nil || len(status.Details.Causes) == 0 || status.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
					t.Fatalf("status: %v %+v", err, status)
				}
			})
			t.Run("watch from a list's resourceVersion sees changes in order", func(t *testing.T) {
				list, err := cms.List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w := h.watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + list.ResourceVersion)
				defer w.close()
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Data: map[string]string{"k": "v"}}, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				w.expect("ADDED b", "MODIFIED b", "DELETED b")
			})
			t.Run("WatchList ends its initial events with a bookmark", func(t *testing.T) {
				w := h.watch("/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
				defer w.close()
				w.expect("ADDED a", "BOOKMARK initial-events-end")
				if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				w.expect("ADDED c")
			})
			t.Run("watch from a compacted resourceVersion is a 410 in the stream", func(t *testing.T) {
				for i := range 5 {
					if _, err := cms.Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"i": strconv.Itoa(i)}}, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				latest, err := cms.Get(ctx, "a", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				rv, _ := strconv.ParseInt(latest.ResourceVersion, 10, 64)
				etcd.Compact(rv)
				expectExpiredWatch(t, h, first.ResourceVersion)
			})
		})
	}
}

// expectExpiredWatch polls (bounded) until a watch from rv is answered
// with a 200 stream whose first event is an ERROR carrying 410 Expired:
// a cache learns of etcd's compaction within its check period.
func expectExpiredWatch(t *testing.T, h *httpClient, rv string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		w := h.watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + rv)
		ev, ok := w.nextWithin(300 * time.Millisecond)
		w.close()
		if ok && ev.Type == "ERROR" {
			var status metav1.Status
			if err := json.Unmarshal(ev.Object, &status); err != nil || status.Code != http.StatusGone || status.Reason != metav1.StatusReasonExpired {
				t.Fatalf("ERROR event: %v %s", err, ev.Object)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a watch from the compacted revision %s was never refused (last event %+v)", rv, ev)
		}
	}
}

func TestConsistentListAcrossReplicas(t *testing.T) {
	etcd := etcdtest.Start(t)
	a := testserver.Start(t, testserver.WithEtcd(etcd.URL()))
	b := testserver.Start(t, testserver.WithEtcd(etcd.URL()))
	ca := kubernetes.NewForConfigOrDie(a.ClientConfig).CoreV1().ConfigMaps("default")
	cb := kubernetes.NewForConfigOrDie(b.ClientConfig).CoreV1().ConfigMaps("default")
	ctx := context.Background()
	for i := range 30 {
		if _, err := ca.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		list, err := cb.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != i+1 {
			t.Fatalf("replica b lists %d configmaps right after the %dth create on replica a", len(list.Items), i+1)
		}
	}
}

// httpClient speaks the REST API by hand, for exact codes and streams.
type httpClient struct {
	t   *testing.T
	srv *testserver.TestServer
	c   *http.Client
}

type response struct {
	code   int
	header http.Header
	body   []byte
}

func (h *httpClient) do(method, path string) *http.Response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	resp, err := h.c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

func (h *httpClient) get(path string) response {
	h.t.Helper()
	resp := h.do(http.MethodGet, path)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return response{code: resp.StatusCode, header: resp.Header, body: body}
}

type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

type watchStream struct {
	t      *testing.T
	resp   *http.Response
	events chan watchEvent
}

func (h *httpClient) watch(path string) *watchStream {
	h.t.Helper()
	resp := h.do(http.MethodGet, path)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.t.Fatalf("watch %s: %d %s", path, resp.StatusCode, body)
	}
	w := &watchStream{t: h.t, resp: resp, events: make(chan watchEvent, 100)}
	go func() {
		defer close(w.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				w.events <- ev
			}
		}
	}()
	return w
}

func (w *watchStream) close() { w.resp.Body.Close() }

func (w *watchStream) nextWithin(d time.Duration) (watchEvent, bool) {
	select {
	case ev, ok := <-w.events:
		return ev, ok
	case <-time.After(d):
		return watchEvent{}, false
	}
}

// expect reads events until it has seen each of want ("TYPE name", or
// "BOOKMARK initial-events-end"), in order; other bookmarks are skipped.
func (w *watchStream) expect(want ...string) {
	w.t.Helper()
	for _, wantDesc := range want {
		for {
			ev, ok := w.nextWithin(10 * time.Second)
			if !ok {
				w.t.Fatalf("no event in time, want %q", wantDesc)
			}
			var obj struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(ev.Object, &obj); err != nil {
				w.t.Fatal(err)
			}
			desc := ev.Type + " " + obj.Metadata.Name
			if ev.Type == "BOOKMARK" {
				if obj.Metadata.Annotations[metav1.InitialEventsAnnotationKey] != "true" {
					continue
				}
				desc = "BOOKMARK initial-events-end"
			}
			if desc != wantDesc {
				w.t.Fatalf("got %q, want %q", desc, wantDesc)
			}
			break
		}
	}
}
