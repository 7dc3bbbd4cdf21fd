// Package openapi tests /openapi/v2 and /openapi/v3 of a running
// miniapiserver: the HTTP exchange (media types, ETag, caching, redirects)
// as kube-apiserver 1.37 answers it, client-go's discovery of the
// documents, and what they unlock in the real kubectl (explain, validation
// of manifests). One server serves every test of the package.
package openapi

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

// response is what a request got back.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// get sends GET path with headers ("Name: value") as the administrator;
// it does not follow redirects, nor decompress.
func get(t *testing.T, path string, headers ...string) response {
	t.Helper()
	return request(t, http.MethodGet, path, headers...)
}

func request(t *testing.T, method, path string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	client := srv.HTTPClient(t)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: body}
}
