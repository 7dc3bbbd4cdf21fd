// Package core tests the core/v1 resources (and leases) through the real
// HTTP API, with client-go and raw requests, against one shared server.
// The expected defaults, codes and messages were checked against a
// kube-apiserver v1.37.
package core

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// serviceRange is the shared server's --service-cluster-ip-range: 254
// usable addresses, the lower 16 of them kept for requested IPs.
const serviceRange = "10.96.0.0/24"

// eventTTL is the shared server's --event-ttl.
const eventTTL = 2 * time.Hour

var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) {
		o.ServiceClusterIPRange = serviceRange
		o.EventTTL = eventTTL
	})
}

func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// namespace creates a namespace for one test.
func namespace(t testing.TB) string {
	t.Helper()
	return srv.CreateNamespace(t)
}

// response is what a raw request got back.
type response struct {
	code int
	body []byte
}

// do sends a raw request as the administrator; body is JSON (a string,
// or a value to marshal) and headers are "Name: value".
func do(t testing.TB, method, path string, body interface{}, headers ...string) response {
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

func (r response) decode(t testing.TB, into interface{}) {
	t.Helper()
	if err := json.Unmarshal(r.body, into); err != nil {
		t.Fatalf("decoding %d %s: %v", r.code, r.body, err)
	}
}

// tableRows returns the cells of a Table answer.
func tableRows(t testing.TB, path string) (columns []string, rows [][]interface{}) {
	t.Helper()
	r := do(t, http.MethodGet, path, nil, "Accept: application/json;as=Table;v=v1;g=meta.k8s.io")
	if r.code != http.StatusOK {
		t.Fatalf("GET %s as Table: %d %s", path, r.code, r.body)
	}
	var table metav1.Table
	r.decode(t, &table)
	for _, c := range table.ColumnDefinitions {
		name := c.Name
		if c.Priority == 1 {
			name += "(wide)"
		}
		columns = append(columns, name)
	}
	for _, row := range table.Rows {
		rows = append(rows, row.Cells)
	}
	return columns, rows
}

// wantInvalid checks that err is a 422 whose causes are exactly want
// ("field: message" each, in order).
func wantInvalid(t testing.TB, err error, want ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !asStatus(err, &status) {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	var got []string
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			got = append(got, c.Field+": "+c.Message)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n got %q\nwant %q", got, want)
	}
}

func asStatus(err error, status *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*status = s
	}
	return ok
}

func ptr[T any](v T) *T { return &v }
