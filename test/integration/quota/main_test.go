// Package quota tests kube's ResourceQuota admission through the real
// HTTP API against one shared server. No kube-controller-manager runs:
// each test sets a quota's status.hard and status.used through
// resourcequotas/status, as kcm's resourcequota controller would. The
// expected codes and messages are kube-apiserver v1.37's.
package quota

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var srv *testserver.TestServer

// admissionConfig limits podtemplates by default: a podtemplate needs a
// quota on it (kube's ResourceQuotaConfiguration, given inline).
const admissionConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: ResourceQuotaConfiguration
    limitedResources:
    - resource: podtemplates
      matchContains: ["podtemplates"]
`

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "quota-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(config, []byte(admissionConfig), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) {
		o.Admission.ConfigFile = config
	})
}

func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// list parses "name=quantity,..." into a resource list.
func list(t testing.TB, s string) corev1.ResourceList {
	t.Helper()
	out := corev1.ResourceList{}
	if s == "" {
		return out
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		q, err := resource.ParseQuantity(v)
		if err != nil {
			t.Fatal(err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out
}

// createQuota creates quota q in ns and, as kcm's controller would, sets
// its status: hard from spec.hard, used as given ("" leaves no status).
func createQuota(t testing.TB, ns string, q *corev1.ResourceQuota, used string) *corev1.ResourceQuota {
	t.Helper()
	ctx := context.Background()
	quotas := clientset(t).CoreV1().ResourceQuotas(ns)
	created, err := quotas.Create(ctx, q, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used == "" {
		return created
	}
	created.Status = corev1.ResourceQuotaStatus{Hard: created.Spec.Hard, Used: list(t, used)}
	updated, err := quotas.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return updated
}

// quotaOf is a quota named q with hard limits "name=quantity,...".
func quotaOf(t testing.TB, hard string, scopes ...corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec: corev1.ResourceQuotaSpec{Hard: list(t, hard), Scopes: scopes}}
}

// wantUsed checks quota q's status.used against "name=quantity,...".
func wantUsed(t testing.TB, ns, want string) {
	t.Helper()
	q, err := clientset(t).CoreV1().ResourceQuotas(ns).Get(context.Background(), "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, w := q.Status.Used, list(t, want); !equalLists(got, w) {
		t.Errorf("status.used %v, want %v", got, w)
	}
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// response is what a raw request got back.
type response struct {
	code int
	body string
}

// do sends a raw request as the administrator with a JSON body (a JSON
// merge patch when the method is PATCH).
func do(t testing.TB, method, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/merge-patch+json")
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
	return response{code: resp.StatusCode, body: strings.TrimSpace(string(data))}
}

// wantCode checks a response's code.
func (r response) wantCode(t testing.TB, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("got %d %s, want %d", r.code, r.body, code)
	}
}

// forbidden is kube's 403 Status for resource's object name, with
// message; resource is <resource>[.<group>].
func forbidden(resource, name, message string) string {
	msg, _ := json.Marshal(resource + ` "` + name + `" is forbidden: ` + message)
	details := `"name":"` + name + `"`
	if r, group, ok := strings.Cut(resource, "."); ok {
		details += `,"group":"` + group + `","kind":"` + r + `"`
	} else {
		details += `,"kind":"` + resource + `"`
	}
	return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":` + string(msg) +
		`,"reason":"Forbidden","details":{` + details + `},"code":403}`
}

// wantForbidden checks that r is forbidden with message.
func (r response) wantForbidden(t testing.TB, resource, name, message string) {
	t.Helper()
	if want := forbidden(resource, name, message); r.code != http.StatusForbidden || r.body != want {
		t.Errorf("got %d %s\nwant 403 %s", r.code, r.body, want)
	}
}

var metav1UpdateOptions = metav1.UpdateOptions{}
