// Package networking tests the networking.k8s.io and discovery.k8s.io
// resources through the real HTTP API, with client-go, against one shared
// server. Codes, messages, defaults and tables are kube-apiserver
// v1.37.2's for the same requests (recorded from the reference).
package networking

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// serviceRange is the shared server's --service-cluster-ip-range, the
// default ServiceCIDR's range.
const serviceRange = "10.96.0.0/20"

var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) {
		o.ServiceClusterIPRange = serviceRange
	})
}

func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// warnings is a client that records the warnings the server sends.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// take returns the warnings received since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	msgs := w.msgs
	w.msgs = nil
	return msgs
}

func warningClientset(t testing.TB) (*kubernetes.Clientset, *warnings) {
	t.Helper()
	cfg := rest.CopyConfig(srv.ClientConfig)
	w := &warnings{}
	cfg.WarningHandler = w
	return kubernetes.NewForConfigOrDie(cfg), w
}

// wantInvalid checks that err is a 422 of kind whose causes are exactly
// want ("field: message" each, in order).
func wantInvalid(t testing.TB, err error, kind string, want ...string) {
	t.Helper()
	status, ok := err.(apierrors.APIStatus)
	if !apierrors.IsInvalid(err) || !ok {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	if d := status.Status().Details; d == nil || d.Kind != kind {
		t.Errorf("details %+v, want kind %s", d, kind)
	}
	var got []string
	for _, c := range status.Status().Details.Causes {
		got = append(got, c.Field+": "+c.Message)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// get returns the body of a GET of path from ts, accepting accept.
func get(t testing.TB, ts *testserver.TestServer, path, accept string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := ts.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", path, resp.StatusCode, body, err)
	}
	return body
}

// table returns the column names and the rows' cells of path as a Table,
// from ts.
func table(t testing.TB, ts *testserver.TestServer, path string) (columns []string, rows [][]interface{}) {
	t.Helper()
	var tbl metav1.Table
	if body := get(t, ts, path, "application/json;as=Table;v=v1;g=meta.k8s.io"); json.Unmarshal(body, &tbl) != nil {
		t.Fatalf("GET %s as Table: %s", path, body)
	}
	for _, c := range tbl.ColumnDefinitions {
		columns = append(columns, c.Name)
	}
	for _, r := range tbl.Rows {
		rows = append(rows, r.Cells)
	}
	return columns, rows
}

// managers returns "manager operation subresource" of each managed
// fields entry.
func managers(m metav1.Object) []string {
	var out []string
	for _, e := range m.GetManagedFields() {
		out = append(out, strings.TrimSpace(e.Manager+" "+string(e.Operation)+" "+e.Subresource))
	}
	return out
}
