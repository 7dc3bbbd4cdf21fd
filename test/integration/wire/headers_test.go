package wire

import (
	"net/http"
	"testing"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// TestCacheControl checks kube's Cache-Control: "no-cache, private" on
// every response (errors, plain text, the unauthenticated included) but
// the aggregated discovery documents, which are public.
func TestCacheControl(t *testing.T) {
	tests := []struct {
		name string
		r    req
		want string
	}{
		{"object", req{path: "/api/v1/namespaces/default/configmaps/kube-root-ca.crt"}, "no-cache, private"},
		{"router 406", req{path: "/api/v1/namespaces/default/configmaps", headers: []string{"Accept: text/html"}}, "no-cache, private"},
		{"version", req{path: "/version"}, "no-cache, private"},
		{"health", req{path: "/healthz"}, "no-cache, private"},
		{"plain 404", req{path: "/nope"}, "no-cache, private"},
		{"watch", req{path: "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion=0"}, "no-cache, private"},
		{"discovery", req{path: "/apis"}, "no-cache, private"},
		{"aggregated discovery", req{path: "/apis", headers: []string{"Accept: " + acceptAggregated}}, "public"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := do(t, tc.r).header.Get("Cache-Control"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("401", func(t *testing.T) {
		cfg := *srv.ClientConfig
		cfg.BearerToken = "wrong"
		resp, err := (&testserver.TestServer{ClientConfig: &cfg}).HTTPClient(t).Get(srv.URL + "/api")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Cache-Control") != "no-cache, private" {
			t.Errorf("got %d %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
		}
	})
}
