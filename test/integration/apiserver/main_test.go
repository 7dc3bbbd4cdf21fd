// Package apiserver tests miniapiserver's HTTP API through real requests
// (client-go, and raw HTTP where exact codes, bodies and headers matter)
// against one shared server. The expected bodies were checked against a
// kube-apiserver v1.37.
package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares (with an insecure
// port); tests that stop a server start their own.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, testserver.WithInsecurePort())
}

// clientset is a typed client of the shared server.
func clientset(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// namespace creates a namespace of its own for a test.
func namespace(t *testing.T) string {
	t.Helper()
	name := srv.CreateNamespace(t)
	// Every namespace starts with the ConfigMap kube-root-ca.crt, as in
	// kube; the tests count the configmaps they make.
	if err := clientset(t).CoreV1().ConfigMaps(name).Delete(context.Background(), "kube-root-ca.crt", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting %s/kube-root-ca.crt: %v", name, err)
	}
	return name
}

// response is what a raw request got back.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// req is a raw request: method, path (with query), body (string or
// []byte; nil for none) and headers as "Name: value" strings.
type req struct {
	method  string
	path    string
	body    interface{}
	headers []string
	noAuth  bool
}

// do sends r to the shared server as its administrator (or with no
// credentials when r.noAuth).
func do(t *testing.T, r req) response {
	t.Helper()
	var body io.Reader
	switch b := r.body.(type) {
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	}
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	hr, err := http.NewRequest(method, srv.URL+r.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.body != nil && !hasHeader(r.headers, "Content-Type") {
		hr.Header.Set("Content-Type", "application/json")
	}
	for _, h := range r.headers {
		name, value, _ := strings.Cut(h, ":")
		hr.Header.Set(name, strings.TrimSpace(value))
	}
	client := httpClient(t)
	if r.noAuth {
		client = anonymousClient(t)
	}
	resp, err := client.Do(hr)
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

func hasHeader(headers []string, name string) bool {
	for _, h := range headers {
		if n, _, _ := strings.Cut(h, ":"); strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

var (
	adminClient, anonClient *http.Client
)

func httpClient(t *testing.T) *http.Client {
	if adminClient == nil {
		adminClient = srv.HTTPClient(t)
	}
	return adminClient
}

// anonymousClient trusts the server and sends no credentials.
func anonymousClient(t *testing.T) *http.Client {
	if anonClient == nil {
		cfg := *srv.ClientConfig
		cfg.BearerToken = ""
		anonClient = (&testserver.TestServer{ClientConfig: &cfg}).HTTPClient(t)
	}
	return anonClient
}

// status decodes a Status body.
func (r response) status(t *testing.T) metav1.Status {
	t.Helper()
	var s metav1.Status
	if err := json.Unmarshal(r.body, &s); err != nil || s.Kind != "Status" {
		t.Fatalf("want a Status, got %d %s (%v)", r.code, r.body, err)
	}
	return s
}

// wantStatus checks the code and that the body is exactly want (a Status
// in compact JSON, as kube writes it, plus the newline of its encoder).
func (r response) wantStatus(t *testing.T, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("code: got %d, want %d (body %s)", r.code, code, r.body)
	}
	if got := strings.TrimSuffix(string(r.body), "\n"); got != want {
		t.Errorf("body:\n got %s\nwant %s", got, want)
	}
}

// object decodes a JSON body into obj.
func (r response) object(t *testing.T, obj interface{}) {
	t.Helper()
	if err := json.Unmarshal(r.body, obj); err != nil {
		t.Fatalf("decoding %d %s: %v", r.code, r.body, err)
	}
}

// createConfigMap creates a configmap through client-go.
func createConfigMap(t *testing.T, ns, name string, labels map[string]string) *corev1.ConfigMap {
	t.Helper()
	cm, err := clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

// getConfigMap reads a configmap with a raw GET: its code and object.
func getConfigMap(t *testing.T, ns, name string) (int, *corev1.ConfigMap) {
	t.Helper()
	r := do(t, req{path: "/api/v1/namespaces/" + ns + "/configmaps/" + name})
	if r.code != http.StatusOK {
		return r.code, nil
	}
	cm := &corev1.ConfigMap{}
	r.object(t, cm)
	return r.code, cm
}

// wantNotStored checks that a failed create left nothing behind.
func wantNotStored(t *testing.T, ns, name string) {
	t.Helper()
	if code, _ := getConfigMap(t, ns, name); code != http.StatusNotFound {
		t.Errorf("configmap %s/%s: got %d after a failed write, want 404", ns, name, code)
	}
}

// wantUnchanged checks that a failed write left the object as it was.
func wantUnchanged(t *testing.T, old *corev1.ConfigMap) {
	t.Helper()
	code, cm := getConfigMap(t, old.Namespace, old.Name)
	if code != http.StatusOK || cm.ResourceVersion != old.ResourceVersion {
		t.Errorf("configmap %s/%s changed after a failed write: code %d, %+v", old.Namespace, old.Name, code, cm)
	}
}
