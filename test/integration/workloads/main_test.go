// Package workloads tests the workload resources (pods, pod templates,
// replication controllers and the apps/v1 kinds) through the real HTTP API
// of a test server, with client-go. Expectations come from a reference
// kube-apiserver v1.37.2: testdata holds what it answered to the same
// requests.
package workloads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// env is what every test of the package shares: one server, its clients.
type env struct {
	srv     *testserver.TestServer
	client  kubernetes.Interface
	dynamic dynamic.Interface
	http    *http.Client
}

// TestWorkloads runs every test of the package against one server, each
// in namespaces of its own.
func TestWorkloads(t *testing.T) {
	srv := testserver.Start(t)
	e := &env{
		srv:     srv,
		client:  kubernetes.NewForConfigOrDie(srv.ClientConfig),
		dynamic: dynamic.NewForConfigOrDie(srv.ClientConfig),
		http:    srv.HTTPClient(t),
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"Discovery", testDiscovery},
		{"Defaults", testDefaults},
		{"Transcript", testTranscript},
		{"Generation", testGeneration},
		{"StatusSubresource", testStatusSubresource},
		{"Scale", testScale},
		{"Binding", testBinding},
		{"PodGracefulDeletion", testPodGracefulDeletion},
		{"PodFieldSelectors", testPodFieldSelectors},
		{"Deletion", testDeletion},
		{"Tables", testTables},
		{"CRUD", testCRUD},
		{"Warnings", testWarnings},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// namespace creates a namespace for one test.
func (e *env) namespace(t *testing.T, name string) string {
	t.Helper()
	_, err := e.client.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// do sends a request to the server by hand and returns the status code
// and body.
func (e *env) do(t *testing.T, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	code, _, data := e.send(t, method, path, contentType, body)
	return code, data
}

// send is do that also returns the response's headers.
func (e *env) send(t *testing.T, method, path, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.srv.Token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := e.http.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// statusOf returns the Status of a client-go error, failing the test when
// err is not one.
func statusOf(t *testing.T, err error) metav1.Status {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("want a Status error, got %v", err)
	}
	return se.ErrStatus
}

// mustJSON marshals v, failing the test on error.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// firstDiff describes the first line where two texts differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return ""
}
