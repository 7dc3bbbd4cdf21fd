// Package fuzz feeds the HTTP API what a fuzzer makes up: request bodies
// in every content type, patches of every type, selectors, list
// parameters. Whatever comes in, the answer is a success or a Kubernetes
// Status with a 4xx code (504 where kube's is a timeout): never a 500 (a
// panic the recovery filter caught), a body that is not a Status, or a
// request that does not end.
//
// `go test` runs the seeds (testdata/fuzz and f.Add); hack/fuzz.sh runs
// each target for a few seconds (FUZZTIME) with new inputs. Each fuzzing
// worker process starts its own server, on the insecure port (plain
// HTTP: more inputs per second).
package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// requestTimeout bounds every request: one that takes longer is a hang.
const requestTimeout = 20 * time.Second

// target is a server and a namespace of its own for one fuzz target.
type target struct {
	url    string // the insecure port's
	ns     string
	client *http.Client
}

// newTarget starts a server for a fuzz target, stopped at cleanup. It
// uses package app rather than testserver, whose client-go dependency
// would triple what fuzzing instruments and builds.
func newTarget(f *testing.F, opts ...func(*app.Options)) *target {
	f.Helper()
	o := app.NewOptions()
	o.DataDir = f.TempDir()
	o.SecurePort = 0
	o.InsecurePort = freePort(f)
	o.EtcdUnsafeNoFsync = true
	o.EtcdCompactionInterval = 0
	o.LogLevel = "error"
	for _, opt := range opts {
		opt(o)
	}
	srv, err := app.Start(o)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.WaitForReady(ctx); err != nil {
		f.Fatal(err)
	}
	client := &http.Client{Timeout: requestTimeout}
	f.Cleanup(client.CloseIdleConnections)
	tg := &target{url: srv.InsecureURL, ns: "fuzz", client: client}
	ns := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fuzz"}}`)
	if a := tg.do(f, http.MethodPost, "/api/v1/namespaces", "application/json", ns); a.code != http.StatusCreated {
		f.Fatalf("creating the namespace: %d %s", a.code, a.body)
	}
	return tg
}

func freePort(f *testing.F) int {
	f.Helper()
	port, err := testserver.FreePort()
	if err != nil {
		f.Fatal(err)
	}
	return port
}

// answer is what a request got.
type answer struct {
	code int
	body []byte
}

// do sends a request on the insecure port and reads the whole answer.
func (tg *target) do(t testing.TB, method, path, contentType string, body []byte) answer {
	return tg.send(t, method, path, contentType, body, false)
}

// watch sends a watch: a success is the head of a stream, closed at once.
func (tg *target) watch(t testing.TB, path string) answer {
	return tg.send(t, http.MethodGet, path, "", nil, true)
}

func (tg *target) send(t testing.TB, method, path, contentType string, body []byte, watch bool) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, tg.url+path, bytes.NewReader(body))
	if err != nil {
		t.Skipf("not a request: %v", err) // the fuzzer made an unsendable URL
	}
	if strings.Contains(req.URL.RequestURI(), " ") {
		// Go's client writes such a query unescaped, and the request line
		// it makes is refused by net/http's server before any handler (a
		// plain-text 400, as kube-apiserver's listener answers too).
		t.Skipf("not a request line: %q", req.URL.RequestURI())
	}
	if contentType != "" {
		if !httpguts.ValidHeaderFieldValue(contentType) {
			t.Skipf("not a header value: %q", contentType) // Go's client would not send it
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if watch && resp.StatusCode == http.StatusOK {
		return answer{code: resp.StatusCode}
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return answer{code: resp.StatusCode, body: data}
}

// check fails unless a is a success or a Status of one of the allowed
// failure codes, its code the answer's.
func (a answer) check(t testing.TB, what string, allowed ...int) {
	t.Helper()
	if a.code >= 200 && a.code < 300 {
		return
	}
	var status metav1.Status
	if err := json.Unmarshal(a.body, &status); err != nil || status.Kind != "Status" {
		t.Fatalf("%s: %d without a Status: %q", what, a.code, a.body)
	}
	if int(status.Code) != a.code || status.Status != metav1.StatusFailure {
		t.Fatalf("%s: answered %d with the Status %+v", what, a.code, status)
	}
	for _, code := range allowed {
		if a.code == code {
			return
		}
	}
	t.Fatalf("%s: unexpected %d: %s", what, a.code, status.Message)
}

// clientErrors are the failures a bad request may get.
var clientErrors = []int{
	http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable,
	http.StatusConflict, http.StatusGone, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
	http.StatusUnprocessableEntity, http.StatusForbidden,
}
