package authz

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// response is what a raw request got back.
type response struct {
	code int
	body []byte
}

// do sends a raw request with token ("": none, an anonymous request;
// body: JSON, a string or a value to marshal; headers: "Name: value").
func do(t testing.TB, token, method, path string, body interface{}, headers ...string) response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	client := srv.HTTPClient(t) // the admin's, unless the request says whose
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	} else {
		transport, err := rest.TransportFor(srv.AnonymousClientConfig())
		if err != nil {
			t.Fatal(err)
		}
		client = &http.Client{Transport: transport}
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{code: resp.StatusCode, body: data}
}

// status decodes a Status answer, without its (empty) metadata.
func (r response) status(t testing.TB) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decoding %d %s: %v", r.code, r.body, err)
	}
	delete(m, "metadata")
	return m
}

func (r response) wantCode(t testing.TB, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("got %d, want %d: %s", r.code, code, r.body)
	}
}

// statusMessage returns the message of a Status answer with code.
func (r response) statusMessage(t testing.TB, code int) string {
	t.Helper()
	r.wantCode(t, code)
	msg, _ := r.status(t)["message"].(string)
	return msg
}

func rbacPath(resource, namespace string) string {
	if namespace == "" {
		return "/apis/rbac.authorization.k8s.io/v1/" + resource
	}
	return "/apis/rbac.authorization.k8s.io/v1/namespaces/" + namespace + "/" + resource
}

// TestForbiddenAsKube: a user bound to nothing, and an anonymous client,
// are refused with kube-apiserver 1.37.2's 403 Status, byte for byte (as
// it answers with --authorization-mode=RBAC: RBAC gives no reason, so the
// message ends with the scope).
func TestForbiddenAsKube(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, token, method, path, want string
	}{
		{"list in a namespace", "heidi-token", "GET", "/api/v1/namespaces/y/secrets",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets is forbidden: User \"heidi\" cannot list resource \"secrets\" in API group \"\" in the namespace \"y\"","reason":"Forbidden","details":{"kind":"secrets"},"code":403}`},
		{"get by name", "heidi-token", "GET", "/api/v1/namespaces/y/secrets/s1",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"secrets \"s1\" is forbidden: User \"heidi\" cannot get resource \"secrets\" in API group \"\" in the namespace \"y\"","reason":"Forbidden","details":{"name":"s1","kind":"secrets"},"code":403}`},
		{"cluster scope, a group", "heidi-token", "GET", "/apis/apps/v1/deployments",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps is forbidden: User \"heidi\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope","reason":"Forbidden","details":{"group":"apps","kind":"deployments"},"code":403}`},
		{"subresource", "heidi-token", "GET", "/api/v1/nodes/n1/status",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nodes \"n1\" is forbidden: User \"heidi\" cannot get resource \"nodes/status\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"name":"n1","kind":"nodes"},"code":403}`},
		{"path", "heidi-token", "GET", "/metrics",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"heidi\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}`},
		{"anonymous", "", "GET", "/api/v1/namespaces",
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"namespaces"},"code":403}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.token, tc.method, tc.path, nil)
			if got := strings.TrimSpace(string(r.body)); r.code != 403 || got != tc.want {
				t.Errorf("%s %s: got %d\n%s\nwant 403\n%s", tc.method, tc.path, r.code, got, tc.want)
			}
		})
	}
}
