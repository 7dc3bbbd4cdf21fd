// Package wire tests what goes over the wire between miniapiserver and its
// clients, as kube-apiserver 1.37 writes it for kubectl 1.32 and client-go
// 0.37: aggregated discovery, protobuf objects, lists and watch frames,
// gzip, CBOR refusals, Tables, and the watch options informers use. One
// server is shared by the package; the expected bytes and headers were
// checked against a kube-apiserver v1.37.
package wire

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// srv is the server every test of the package shares.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	// The fixtures include v1 Endpoints, whose deprecation warning
	// client-go would log at every request.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

// clientset is a typed client of the shared server: protobuf, as
// client-go's generated clients ask by default.
func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// namespace creates a namespace of its own for a test. It holds the
// ConfigMap kube-root-ca.crt and the ServiceAccount default, as in kube.
func namespace(t testing.TB) string {
	t.Helper()
	return srv.CreateNamespace(t)
}

// response is what a raw request got back.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// req is a raw request: method, path (with query), body and headers as
// "Name: value" strings. Bodies are not decompressed: a test that sends
// Accept-Encoding sees what the server wrote.
type req struct {
	method  string
	path    string
	body    []byte
	headers []string
}

var (
	httpClientOnce sync.Once
	httpClient     *http.Client
)

// rawClient is the shared plain HTTP client (tests use it concurrently).
func rawClient(t testing.TB) *http.Client {
	httpClientOnce.Do(func() { httpClient = srv.HTTPClient(t) })
	return httpClient
}

// do sends r to the shared server as its administrator.
func do(t testing.TB, r req) response {
	t.Helper()
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	hr, err := http.NewRequest(method, srv.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	// An explicit Accept-Encoding keeps Go's transport from asking for
	// gzip and decompressing on its own.
	hr.Header.Set("Accept-Encoding", "identity")
	hr.Header.Set("User-Agent", "wire-test")
	for _, h := range r.headers {
		name, value, _ := strings.Cut(h, ":")
		hr.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := rawClient(t).Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, r.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, r.path, err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// watchLines opens a watch with r and returns its response (without a
// body) and its lines up to and including the first for which last says
// true; the watch is then closed. It fails after 10s.
func watchLines(t testing.TB, r req, last func(line []byte) bool) (response, [][]byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+r.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Accept-Encoding", "identity")
	for _, h := range r.headers {
		name, value, _ := strings.Cut(h, ":")
		hr.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := rawClient(t).Do(hr)
	if err != nil {
		t.Fatalf("watch %s: %v", r.path, err)
	}
	defer resp.Body.Close()
	out := response{code: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK {
		out.body, _ = io.ReadAll(resp.Body)
		return out, nil
	}
	var lines [][]byte
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		line := bytes.Clone(scanner.Bytes())
		lines = append(lines, line)
		if last(line) {
			return out, lines
		}
	}
	t.Fatalf("watch %s ended after %d lines: %v", r.path, len(lines), scanner.Err())
	return out, nil
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := "testdata/" + name
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (run with -update if the change is meant):\n%s", name, file, got)
	}
}
