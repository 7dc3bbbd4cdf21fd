package wire

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	bigOnce sync.Once
	bigNS   string
)

// bigNamespace holds 300 ConfigMaps of 1 KiB: its list is about 400 KiB in
// JSON, over kube's gzip threshold of 128 KiB.
func bigNamespace(t *testing.T) string {
	t.Helper()
	bigOnce.Do(func() {
		bigNS = namespace(t)
		createConfigMaps(t, bigNS, 300, 1024)
	})
	if bigNS == "" {
		t.Fatal("the big namespace could not be made")
	}
	return bigNS
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// TestGzip checks kube's rule: a response body over 128 KiB is compressed
// when Accept-Encoding names gzip, a smaller one never is; the content is
// the same either way.
func TestGzip(t *testing.T) {
	big := "/api/v1/namespaces/" + bigNamespace(t) + "/configmaps"
	small := "/api/v1/namespaces/" + bigNamespace(t) + "/configmaps?limit=10"
	ns := namespace(t)
	_, err := clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "large"}, Data: map[string]string{"v": strings.Repeat("y", 200*1024)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	large := "/api/v1/namespaces/" + ns + "/configmaps/large"
	tests := []struct {
		name, path, accept, acceptEncoding string
		gzipped                            bool
	}{
		{"large JSON list", big, "application/json", "gzip", true},
		{"large protobuf list", big, mediaTypeProtobuf, "gzip", true},
		{"large YAML list", big, "application/yaml", "gzip", true},
		{"large pretty list", big + "?pretty=true", "application/json", "gzip", true},
		{"large Table", big + "?includeObject=Object", "application/json;as=Table;v=v1;g=meta.k8s.io", "gzip", true},
		{"large object", large, "application/json", "gzip", true},
		{"large object in protobuf", large, mediaTypeProtobuf, "gzip", true},
		{"Go's header", big, "application/json", "gzip, deflate", true},
		{"small list", small, "application/json", "gzip", false},
		{"small protobuf list", small, mediaTypeProtobuf, "gzip", false},
		{"no gzip asked", big, "application/json", "identity", false},
		{"gzip with a weight (kube wants the bare token)", big, "application/json", "gzip;q=1.0", false},
		{"deflate only", big, "application/json", "deflate", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain := do(t, req{path: tc.path, headers: []string{"Accept: " + tc.accept}})
			r := do(t, req{path: tc.path, headers: []string{"Accept: " + tc.accept, "Accept-Encoding: " + tc.acceptEncoding}})
			if r.code != 200 || plain.code != 200 {
				t.Fatalf("got %d and %d: %.300s", r.code, plain.code, r.body)
			}
			body := r.body
			if tc.gzipped {
				if r.header.Get("Content-Encoding") != "gzip" || r.header.Get("Vary") != "Accept-Encoding" {
					t.Fatalf("headers: %v", r.header)
				}
				body = gunzip(t, r.body)
				if len(r.body) >= len(body)/2 {
					t.Errorf("compressed %d bytes into %d", len(body), len(r.body))
				}
			} else if r.header.Get("Content-Encoding") != "" {
				t.Fatalf("compressed: %v", r.header)
			}
			if len(body) < 1000 {
				t.Fatalf("short body: %s", body)
			}
			// A Table's AGE moves on between the two requests.
			if !strings.Contains(tc.accept, "Table") && !bytes.Equal(body, plain.body) {
				t.Errorf("the content differs from the uncompressed response (%d and %d bytes)", len(body), len(plain.body))
			}
			if asked := strings.HasPrefix(tc.acceptEncoding, "gzip,") || tc.acceptEncoding == "gzip"; asked && tc.gzipped != (len(plain.body) > 128*1024) {
				t.Errorf("a body of %d bytes, gzipped=%v", len(plain.body), tc.gzipped)
			}
		})
	}
}

// TestGzipWatch checks that kube compresses a WatchList stream (initial
// events and bookmarks) when the client accepts gzip, and no other watch.
func TestGzipWatch(t *testing.T) {
	ns := bigNamespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=true&timeoutSeconds=1&allowWatchBookmarks=true"
	tests := []struct {
		name    string
		query   string
		gzipped bool
	}{
		{"WatchList", "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", true},
		{"legacy watch from 0 (a WatchList in 1.37)", "&resourceVersion=0", true},
		{"watch from a revision", "&resourceVersion=1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, req{path: path + tc.query, headers: []string{"Accept-Encoding: gzip"}})
			if r.code != 200 {
				t.Fatalf("got %d %.300s", r.code, r.body)
			}
			body := r.body
			if tc.gzipped {
				if r.header.Get("Content-Encoding") != "gzip" || r.header.Get("Vary") != "Accept-Encoding" {
					t.Fatalf("headers: %v", r.header)
				}
				body = gunzip(t, r.body)
				if n := bytes.Count(body, []byte(`{"type":"ADDED"`)); n != 301 {
					t.Errorf("%d initial events, want 301", n)
				}
				if !bytes.Contains(body, []byte(`"k8s.io/initial-events-end":"true"`)) {
					t.Errorf("no initial-events-end bookmark")
				}
			} else if r.header.Get("Content-Encoding") != "" {
				t.Fatalf("compressed: %v", r.header)
			}
		})
	}
}
