package wire

import (
	"bytes"
	"testing"
)

// TestPretty checks kube's ?pretty: an indented list (and so for curl's
// User-Agent), compact watch events whatever is asked.
func TestPretty(t *testing.T) {
	ns := namespace(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	tests := []struct {
		name     string
		r        req
		indented bool
	}{
		{"list", req{path: path + "?pretty=true"}, true},
		{"list for curl", req{path: path, headers: []string{"User-Agent: curl/8.5.0"}}, true},
		{"list, pretty=false for curl", req{path: path + "?pretty=false", headers: []string{"User-Agent: curl/8.5.0"}}, false},
		{"list, pretty=1 in Accept", req{path: path, headers: []string{"Accept: application/json;pretty=1"}}, true},
		{"list", req{path: path}, false},
		{"object", req{path: path + "/kube-root-ca.crt?pretty=true"}, true},
		{"error", req{path: path + "/missing?pretty=true"}, true},
		{"watch", req{path: path + "?watch=true&pretty=true&timeoutSeconds=1&resourceVersion=0", headers: []string{"User-Agent: curl/8.5.0"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.r)
			if r.code != 200 && r.code != 404 {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			if got := bytes.HasPrefix(r.body, []byte("{\n  \"")); got != tc.indented {
				t.Errorf("indented=%v: %.200s", got, r.body)
			}
			if !tc.indented && !bytes.HasPrefix(r.body, []byte(`{"`)) {
				t.Errorf("not compact JSON: %.200s", r.body)
			}
		})
	}
}
