package apiserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// watchStream reads the events of a raw watch, one JSON object per line.
type watchStream struct {
	resp  *http.Response
	lines chan []byte
}

// event is a watch event with the object's metadata decoded.
type event struct {
	Type   watch.EventType
	Object struct {
		Kind, APIVersion string
		Metadata         metav1.ObjectMeta
		Data             map[string]string
	}
}

// http1Client speaks HTTP/1.1, where a watch is a chunked response.
func http1Client(t *testing.T) *http.Client {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(srv.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}}
}

// startWatch opens a watch on path over HTTP/1.1.
func startWatch(t *testing.T, path string) *watchStream {
	t.Helper()
	r, err := http.NewRequest("GET", srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+srv.Token)
	resp, err := http1Client(t).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("watch %s: %d %s", path, resp.StatusCode, body)
	}
	if !slices.Equal(resp.TransferEncoding, []string{"chunked"}) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("watch response: transfer encoding %v, content type %q", resp.TransferEncoding, resp.Header.Get("Content-Type"))
	}
	ws := &watchStream{resp: resp, lines: make(chan []byte, 100)}
	go func() {
		defer close(ws.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			ws.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	return ws
}

// next returns the next event; it fails the test when none comes in time
// (an event not flushed would not come).
func (ws *watchStream) next(t *testing.T) event {
	t.Helper()
	select {
	case line, ok := <-ws.lines:
		if !ok {
			t.Fatal("the watch ended")
		}
		var ev event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return event{}
}

// wantEnd waits for the watch to end by itself.
func (ws *watchStream) wantEnd(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-ws.lines:
			if !ok {
				return
			}
			var ev event
			if json.Unmarshal(line, &ev) != nil || ev.Type != watch.Bookmark {
				t.Errorf("unexpected event before the end: %s", line)
			}
		case <-deadline:
			t.Fatalf("the watch did not end within %v", within)
		}
	}
}

func (ev event) want(t *testing.T, typ watch.EventType, name string) {
	t.Helper()
	if ev.Type != typ || ev.Object.Metadata.Name != name || ev.Object.Kind != "ConfigMap" || ev.Object.APIVersion != "v1" {
		t.Fatalf("got %s %s/%s %s, want %s %s", ev.Type, ev.Object.APIVersion, ev.Object.Kind, ev.Object.Metadata.Name, typ, name)
	}
}

// TestWatchCollection checks a watch from a list's resourceVersion:
// ADDED, MODIFIED, DELETED in order, each flushed as it happens.
func TestWatchCollection(t *testing.T) {
	ns := namespace(t)
	createConfigMap(t, ns, "before", nil)
	for _, path := range []string{
		"/api/v1/namespaces/" + ns + "/configmaps?watch=true&resourceVersion=",
		"/api/v1/watch/namespaces/" + ns + "/configmaps?resourceVersion=",
	} {
		t.Run(path, func(t *testing.T) {
			list, err := clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ws := startWatch(t, path+list.ResourceVersion)
			name := "w" + time.Now().Format("150405.000000")
			cm := createConfigMap(t, ns, name, nil)
			ws.next(t).want(t, watch.Added, name)
			cm.Data = map[string]string{"k": "changed"}
			if _, err := clientset(t).CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			ev := ws.next(t)
			ev.want(t, watch.Modified, name)
			if ev.Object.Data["k"] != "changed" {
				t.Errorf("modified object: %+v", ev.Object)
			}
			if err := clientset(t).CoreV1().ConfigMaps(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			ws.next(t).want(t, watch.Deleted, name)
		})
	}
}

// TestWatchOneObject checks the watches of one object by name: the legacy
// /watch/.../NAME path and a metadata.name field selector; neither sees
// another object. (GET NAME?watch=true is a get, as in kube: see
// TestWatchOfOneObjectOutlivesRequestTimeout.)
func TestWatchOneObject(t *testing.T) {
	ns := namespace(t)
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	cases := map[string]string{
		"legacy path":    "/api/v1/watch/namespaces/" + ns + "/configmaps/NAME",
		"field selector": base + "?watch=1&fieldSelector=metadata.name%3DNAME",
	}
	i := 0
	for name, pattern := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			target := "one" + string(rune('a'+i))
			rv := createConfigMap(t, ns, "pre-"+target, nil).ResourceVersion
			ws := startWatch(t, replaceName(pattern, target)+"&resourceVersion="+rv)
			createConfigMap(t, ns, "other-"+target, nil)
			createConfigMap(t, ns, target, nil)
			ws.next(t).want(t, watch.Added, target)
		})
	}
}

func replaceName(pattern, name string) string {
	out := []byte{}
	for i := 0; i < len(pattern); i++ {
		if i+4 <= len(pattern) && pattern[i:i+4] == "NAME" {
			out = append(out, name...)
			i += 3
			continue
		}
		out = append(out, pattern[i])
	}
	s := string(out)
	if !slices.Contains([]byte(s), '?') {
		s += "?"
	}
	return s
}

// TestWatchTimeout checks that timeoutSeconds ends the watch.
func TestWatchTimeout(t *testing.T) {
	ns := namespace(t)
	start := time.Now()
	ws := startWatch(t, "/api/v1/namespaces/"+ns+"/configmaps?watch=true&timeoutSeconds=1")
	ws.wantEnd(t, 10*time.Second)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("the watch ended after %v, before its timeout", d)
	}
}

// TestWatchClientGo checks a client-go watch (the informers' way).
func TestWatchClientGo(t *testing.T) {
	ns := namespace(t)
	client := clientset(t)
	list, err := client.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := client.CoreV1().ConfigMaps(ns).Watch(context.Background(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	createConfigMap(t, ns, "cg", nil)
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != watch.Added || !ok || cm.Name != "cg" {
			t.Errorf("got %s %#v", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}
