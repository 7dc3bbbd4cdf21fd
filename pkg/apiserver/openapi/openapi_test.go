package openapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"
)

// fixture is a small set of documents, /openapi/v2 long enough for kube
// to gzip it.
func fixture() fstest.MapFS {
	v2 := `{"swagger": "2.0", "info": {"title": "t", "version": "1", "description": "` + strings.Repeat("a", 2000) + `"}, "paths": {}}`
	return fstest.MapFS{
		"v2.json":           {Data: []byte(v2)},
		"v3/api/v1.json":    {Data: []byte(`{"openapi": "3.0.0", "paths": {}}`)},
		"v3/version.json":   {Data: []byte(`{"openapi": "3.0.0"}`)},
		"v3/api/README.txt": {Data: []byte("not a document")},
	}
}

func handler(t *testing.T) http.Handler {
	t.Helper()
	s, err := New(fixture(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	s.Install(r)
	return r
}

func serve(h http.Handler, path string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for _, hd := range headers {
		k, v, _ := strings.Cut(hd, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestServeCompactAndGzip(t *testing.T) {
	h := handler(t)
	cases := []struct {
		name, acceptEncoding, wantEncoding string
	}{
		{"no encoding asked", "", ""},
		{"gzip", "gzip, deflate", "gzip"},
		{"gzip refused", "gzip;q=0, deflate", ""},
		{"gzip with a q-value", "deflate;q=1, gzip;q=0.5", "gzip"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := serve(h, "/openapi/v2", "Accept-Encoding: "+tc.acceptEncoding)
			if w.Code != http.StatusOK || w.Header().Get("Content-Encoding") != tc.wantEncoding {
				t.Fatalf("code %d, Content-Encoding %q", w.Code, w.Header().Get("Content-Encoding"))
			}
			if tc.wantEncoding == "" && !strings.HasPrefix(w.Body.String(), `{"swagger":"2.0","info":{"title":"t",`) {
				t.Errorf("body %q: want the compact document", w.Body.String())
			}
		})
	}
}

func TestIndexListsDocumentsOnly(t *testing.T) {
	w := serve(handler(t), "/openapi/v3")
	body := w.Body.String()
	if !strings.Contains(body, `"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=`) || !strings.Contains(body, `"version":`) || strings.Contains(body, "README") {
		t.Errorf("index: %s", body)
	}
	if w := serve(handler(t), "/openapi/v3/api/README.txt"); w.Code != http.StatusNotFound {
		t.Errorf("a file that is no document: got %d, want 404", w.Code)
	}
}

func TestBrokenDocument(t *testing.T) {
	s, err := New(fstest.MapFS{"v2.json": {Data: []byte("{")}, "v3/api/v1.json": {Data: []byte("{")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	s.Install(r)
	if w := serve(r, "/openapi/v2"); w.Code != http.StatusServiceUnavailable {
		t.Errorf("/openapi/v2: got %d, want 503", w.Code)
	}
	if w := serve(r, "/openapi/v3"); w.Code != http.StatusInternalServerError {
		t.Errorf("/openapi/v3: got %d, want 500", w.Code)
	}
}

// TestConcurrentFirstRequests: the encodings made on first use are made
// once, whoever asks first (run with -race).
func TestConcurrentFirstRequests(t *testing.T) {
	h := handler(t)
	var wg sync.WaitGroup
	etags := make([]string, 16)
	for i := range etags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			accept := "application/json"
			if i%2 == 1 {
				accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
			}
			w := serve(h, "/openapi/v2", "Accept: "+accept, "Accept-Encoding: gzip")
			etags[i] = w.Header().Get("Etag")
		}()
	}
	wg.Wait()
	for _, e := range etags {
		if e == "" || e != etags[0] {
			t.Fatalf("ETags: %v", etags)
		}
	}
}
