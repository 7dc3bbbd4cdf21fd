package openapi

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/fstest"

	"github.com/go-chi/chi/v5"
)

func TestAPIPath(t *testing.T) {
	tests := []struct {
		path                     string
		group, version, resource string
		ok                       bool
	}{
		{"/api/", "", "", "", false},
		{"/api/v1/", "", "v1", "", true},
		{"/api/v1/namespaces/{name}/status", "", "v1", "namespaces", true},
		{"/api/v1/namespaces/{namespace}/pods/{name}/log", "", "v1", "pods", true},
		{"/api/v1/watch/namespaces/{namespace}/pods", "", "v1", "pods", true},
		{"/apis/", "", "", "", false},
		{"/apis/apps/", "apps", "", "", true},
		{"/apis/apps/v1/", "apps", "v1", "", true},
		{"/apis/apps/v1/deployments", "apps", "v1", "deployments", true},
		{"/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}/status", "batch", "v1", "cronjobs", true},
		{"/version/", "", "", "", false},
	}
	for _, tc := range tests {
		g, v, r, ok := APIPath(tc.path)
		if g != tc.group || v != tc.version || r != tc.resource || ok != tc.ok {
			t.Errorf("APIPath(%q) = %q, %q, %q, %v; want %q, %q, %q, %v", tc.path, g, v, r, ok, tc.group, tc.version, tc.resource, tc.ok)
		}
	}
}

// TestFiltered: a filter drops the v3 documents of group versions it
// turns off, and the paths it turns off from the others and from v2.
func TestFiltered(t *testing.T) {
	fsys := fstest.MapFS{
		"v2.json":               {Data: []byte(`{"swagger": "2.0", "paths": {"/apis/apps/v1/deployments": {}, "/apis/batch/v1/jobs": {}, "/apis/batch/v1/cronjobs": {}}}`)},
		"v3/apis/apps/v1.json":  {Data: []byte(`{"openapi": "3.0.0", "paths": {"/apis/apps/v1/deployments": {}}}`)},
		"v3/apis/batch/v1.json": {Data: []byte(`{"openapi": "3.0.0", "paths": {"/apis/batch/v1/jobs": {}, "/apis/batch/v1/cronjobs": {}}}`)},
	}
	keep := func(p string) bool {
		g, _, r, ok := APIPath(p)
		return !ok || g != "apps" && r != "cronjobs"
	}
	s, err := New(fsys, keep)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	s.Install(r)
	if w := serve(r, "/openapi/v3/apis/apps/v1"); w.Code != http.StatusNotFound {
		t.Errorf("apps/v1's document: %d, want 404", w.Code)
	}
	paths := func(path string) map[string]any {
		w := serve(r, path)
		var doc struct{ Paths map[string]any }
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v: %s", path, err, w.Body)
		}
		return doc.Paths
	}
	for _, doc := range []string{"/openapi/v2", "/openapi/v3/apis/batch/v1"} {
		got := paths(doc)
		if _, ok := got["/apis/batch/v1/jobs"]; !ok || len(got) != 1 {
			t.Errorf("%s paths %v, want jobs only", doc, got)
		}
	}
}
