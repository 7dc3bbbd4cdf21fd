package apiserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPErrors checks the answers to paths, methods and media types the
// server does not serve, with kube's exact bodies.
func TestHTTPErrors(t *testing.T) {
	ns := namespace(t)
	createConfigMap(t, ns, "a", nil)
	item := "/api/v1/namespaces/" + ns + "/configmaps/a"
	notFound := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`
	methodNotAllowed := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}`
	// What kube cannot negotiate goes out as indented JSON.
	raw406 := func(types string) string {
		return "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"406: Not Acceptable\\n\\nAvailable representations: " +
			types + "\",\n  \"reason\": \"NotAcceptable\",\n  \"details\": {},\n  \"code\": 406\n}"
	}
	const three = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	onlyFollowing := "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"only the following media types are accepted: " + three + "\",\n  \"reason\": \"NotAcceptable\",\n  \"code\": 406\n}"
	cases := []struct {
		name string
		req  req
		code int
		want string
	}{
		{"unknown resource", req{path: "/api/v1/namespaces/" + ns + "/foos"}, 404, notFound},
		{"unknown resource of a served group", req{path: "/apis/apps/v1/foos"}, 404, notFound},
		{"unknown subresource", req{path: item + "/foo"}, 404, notFound},
		{"unknown version", req{path: "/api/v2"}, 404, notFound},
		{"unknown group", req{path: "/apis/nope.io/v1"}, 404, "404 page not found\n"},
		{"unknown path", req{path: "/foo"}, 404, "404 page not found\n"},
		{"PUT on a collection", req{method: "PUT", path: "/api/v1/namespaces/" + ns + "/configmaps", body: `{}`}, 405, methodNotAllowed},
		{"POST on an object", req{method: "POST", path: item, body: `{}`}, 405, methodNotAllowed},
		{"unacceptable Accept on an object", req{path: item, headers: []string{"Accept: text/html"}}, 406, raw406(three)},
		{"unacceptable Accept on a list", req{path: "/api/v1/namespaces/" + ns + "/configmaps", headers: []string{"Accept: text/html"}}, 406,
			raw406(three + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")},
		{"Accept checked before Content-Type", req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", body: `{}`,
			headers: []string{"Accept: text/html", "Content-Type: text/plain"}}, 406, raw406(three)},
		{"unknown representation", req{path: item, headers: []string{"Accept: application/json;as=Foo;v=v1;g=meta.k8s.io"}}, 406, onlyFollowing},
		{"Table as protobuf", req{path: item, headers: []string{"Accept: application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"}}, 406, onlyFollowing},
		{"Table of discovery", req{path: "/api/v1", headers: []string{"Accept: application/json;as=Table;v=v1;g=meta.k8s.io"}}, 406, onlyFollowing},
		{"unacceptable /apis", req{path: "/apis", headers: []string{"Accept: text/html"}}, 406, onlyFollowing},
		{"unacceptable /version", req{path: "/version", headers: []string{"Accept: text/html"}}, 406, raw406("application/json")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			do(t, tc.req).wantStatus(t, tc.code, strings.TrimSuffix(tc.want, "\n"))
		})
	}
}

// TestAuthentication checks bearer token authentication: 401 with kube's
// Status for a token nobody knows (even on the public paths), requests
// without credentials served as system:anonymous (the default
// authorization allows them everything, as kube's AlwaysAllow), and the
// insecure port open to all.
func TestAuthentication(t *testing.T) {
	unauthorized := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	do(t, req{path: "/api/v1/namespaces", noAuth: true, headers: []string{"Authorization: Bearer wrong"}}).wantStatus(t, 401, unauthorized)
	do(t, req{path: "/healthz", noAuth: true, headers: []string{"Authorization: Bearer wrong"}}).wantStatus(t, 401, unauthorized)
	for _, path := range []string{"/api", "/apis", "/healthz", "/livez", "/readyz", "/version"} {
		if r := do(t, req{path: path, noAuth: true}); r.code != 200 {
			t.Errorf("%s without a token: %d %s", path, r.code, r.body)
		}
	}
	whoami := do(t, req{method: "POST", path: "/apis/authentication.k8s.io/v1/selfsubjectreviews", noAuth: true,
		body: `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1"}`})
	if !strings.Contains(string(whoami.body), `"username":"system:anonymous","groups":["system:unauthenticated"]`) {
		t.Errorf("without credentials the server sees: %d %s", whoami.code, whoami.body)
	}
	r := do(t, req{path: "/api", noAuth: true, headers: []string{"Authorization: Bearer wrong"}})
	if r.header.Get("Audit-Id") == "" {
		t.Errorf("no Audit-Id header on a 401")
	}
	if got := do(t, req{path: "/api", headers: []string{"Audit-ID: mine"}}).header.Get("Audit-Id"); got != "mine" {
		t.Errorf("Audit-Id: got %q, want the client's", got)
	}
	// The insecure port needs no token.
	resp, err := http.Get(srv.Server.InsecureURL + "/api/v1/namespaces/default")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"default"`) {
		t.Errorf("insecure port: %d %s", resp.StatusCode, body)
	}
}

// TestHealthAndMetrics checks /readyz?verbose and the request metrics.
func TestHealthAndMetrics(t *testing.T) {
	r := do(t, req{path: "/readyz?verbose"})
	for _, line := range []string{"[+]ping ok", "[+]etcd ok", "readyz check passed"} {
		if !strings.Contains(string(r.body), line) {
			t.Errorf("/readyz?verbose lacks %q:\n%s", line, r.body)
		}
	}
	if r := do(t, req{path: "/readyz/ping"}); r.code != 200 || string(r.body) != "ok" {
		t.Errorf("/readyz/ping: %d %s", r.code, r.body)
	}
	ns := namespace(t)
	do(t, req{path: "/api/v1/namespaces/" + ns + "/configmaps/nope"})
	metrics := string(do(t, req{path: "/metrics"}).body)
	for _, want := range []string{
		`apiserver_request_total{code="404",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"}`,
		`apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="POST",version="v1"}`,
		`apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1",le="0.005"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
