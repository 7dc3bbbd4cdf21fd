package authz

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// response is what a raw request got back.
type response struct {
	code int
	body []byte
}

// do sends a raw request with token (body: JSON, a string or a value to
// marshal; headers: "Name: value").
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
	req.Header.Set("Authorization", "Bearer "+token)
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := srv.HTTPClient(t).Do(req)
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
