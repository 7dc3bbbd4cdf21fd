package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestTrailingSlashes: the API paths kube-apiserver v1.37 serves with
// trailing slashes, and those it does not. kube's API paths are go-restful
// routes, which match with trailing slashes trimmed (go-restful v3
// TrimRightSlashEnabled, its default), reached through the aggregator's
// "/api/" and "/apis/GROUP/VERSION/" proxy prefixes and its "/apis/GROUP/"
// group handler; "/apis/" is the aggregator's group list without
// aggregated discovery (kube-aggregator pkg/apiserver/apiserver.go); the
// health, OpenAPI and metrics paths match exactly (the NonGoRestfulMux).
// kube's conformance test "Discovery should validate PreferredVersion for
// each APIGroup" reads /apis/ and /apis/GROUP/.
func TestTrailingSlashes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	createConfigMap(t, ns, "a", nil)
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	cases := []struct {
		name, method, path, accept string
		code                       int
		kind                       string // of the answer, "" for none
	}{
		{"/api/", "GET", "/api/", "", 200, "APIVersions"},
		{"/api/ aggregated", "GET", "/api/", aggregated + ",application/json", 200, "APIGroupDiscoveryList"},
		{"/apis/", "GET", "/apis/", "", 200, "APIGroupList"},
		{"/apis/ is never aggregated", "GET", "/apis/", aggregated + ",application/json", 200, "APIGroupList"},
		{"/apis/ only aggregated", "GET", "/apis/", aggregated, 406, "Status"},
		{"/apis aggregated", "GET", "/apis", aggregated + ",application/json", 200, "APIGroupDiscoveryList"},
		{"/apis/apps/", "GET", "/apis/apps/", "", 200, "APIGroup"},
		{"/apis/apps/v1/", "GET", "/apis/apps/v1/", "", 200, "APIResourceList"},
		{"/api/v1/", "GET", "/api/v1/", "", 200, "APIResourceList"},
		{"/api/v1//", "GET", "/api/v1//", "", 200, "APIResourceList"},
		{"/version/", "GET", "/version/", "", 200, ""},
		{"a cluster collection", "GET", "/api/v1/namespaces/", "", 200, "NamespaceList"},
		{"a collection of a group", "GET", "/apis/apps/v1/deployments/", "", 200, "DeploymentList"},
		{"an object", "GET", "/api/v1/namespaces/" + ns + "/configmaps/a/", "", 200, "ConfigMap"},
		{"a missing object", "GET", "/api/v1/namespaces/" + ns + "/configmaps/b/", "", 404, "Status"},
		{"a create", "POST", "/api/v1/namespaces/" + ns + "/configmaps/", "", 201, "ConfigMap"},
		{"an unknown group", "GET", "/apis/nope.io/", "", 404, ""},
		{"/apis//", "GET", "/apis//", "", 404, ""},
		{"/healthz/", "GET", "/healthz/", "", 404, ""},
		{"/livez/", "GET", "/livez/", "", 404, ""},
		{"/readyz/", "GET", "/readyz/", "", 404, ""},
		{"/openapi/v2/", "GET", "/openapi/v2/", "", 404, ""},
		{"/metrics/", "GET", "/metrics/", "", 404, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := req{method: tc.method, path: tc.path}
			if tc.accept != "" {
				r.headers = append(r.headers, "Accept: "+tc.accept)
			}
			if tc.method == http.MethodPost {
				r.body = `{"metadata":{"name":"created"}}`
				r.headers = append(r.headers, "Content-Type: application/json")
			}
			got := do(t, r)
			if got.code != tc.code {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, got.code, got.body, tc.code)
			}
			if tc.kind == "" {
				return
			}
			var typed struct{ Kind string }
			if err := json.Unmarshal(got.body, &typed); err != nil || typed.Kind != tc.kind {
				t.Errorf("%s %s: kind %q (%v), want %q", tc.method, tc.path, typed.Kind, err, tc.kind)
			}
		})
	}
}
