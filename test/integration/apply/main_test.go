// Package apply tests server-side apply and metadata.managedFields through
// the real HTTP API of one shared test server: client-go's typed apply
// (applyconfigurations), the dynamic client, raw HTTP for exact bodies,
// and kubectl (client-side and server-side apply).
//
// The expectations come from a reference kube-apiserver v1.37.2: the
// transcript and the kubectl scenario are recorded against it (see
// -record) into testdata, and replayed here, times and identities
// normalised.
package apply

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// record makes the transcript and kubectl tests run against the
// reference kube-apiserver named by $PEER_URL (token $PEER_TOKEN) and
// write what it answered into testdata, instead of checking this server.
var record = flag.Bool("record", false, "record testdata from the kube-apiserver at $PEER_URL (token $PEER_TOKEN)")

// srv is the server every test of the package shares.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(srv.ClientConfig)
}

// target is a server the raw tests speak to: this package's, or the
// reference when recording.
type target struct {
	url, token string
	client     *http.Client
	// kubectl are the flags that point kubectl at the server.
	kubectl []string
}

// testTarget is the shared test server, or the reference with -record.
func testTarget(t *testing.T) *target {
	t.Helper()
	if !*record {
		return &target{url: srv.URL, token: srv.Token, client: srv.HTTPClient(t), kubectl: []string{"--kubeconfig", srv.Server.KubeconfigPath}}
	}
	url, token := os.Getenv("PEER_URL"), os.Getenv("PEER_TOKEN")
	if url == "" || token == "" {
		t.Fatal("-record needs $PEER_URL and $PEER_TOKEN (source /tmp/peer.env)")
	}
	return &target{
		url: url, token: token,
		client:  &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}, //nolint:gosec // the reference on loopback
		kubectl: []string{"--server", url, "--token", token, "--insecure-skip-tls-verify"},
	}
}

// response is what a raw request got back.
type response struct {
	code     int
	body     []byte
	warnings []string
}

// do sends a request as the administrator; userAgent "" sends none.
func (tg *target) do(t *testing.T, method, path, contentType, userAgent string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, method, tg.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tg.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header["User-Agent"] = []string{userAgent}
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return response{code: resp.StatusCode, body: data, warnings: resp.Header.Values("Warning")}
}

var nsCounter atomic.Int64

// namespace creates a namespace for one test on tg (named uniquely when
// recording, so that a recording never meets an earlier one's objects),
// and deletes it when the test ends.
func (tg *target) namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	if *record {
		name = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	}
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	if r := tg.do(t, http.MethodPost, "/api/v1/namespaces", "application/json", "apply-test", ns); r.code != http.StatusCreated {
		t.Fatalf("creating namespace %s: %d %s", name, r.code, r.body)
	}
	if *record {
		// The reference runs no controller manager: pods need their
		// service account made by hand.
		sa := `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`
		tg.do(t, http.MethodPost, "/api/v1/namespaces/"+name+"/serviceaccounts", "application/json", "apply-test", sa)
	}
	t.Cleanup(func() { tg.deleteNamespace(t, name) })
	return name
}

// recordedKinds are the collections the recorded tests write to.
var recordedKinds = []string{
	"/api/v1/namespaces/%s/configmaps", "/api/v1/namespaces/%s/secrets", "/api/v1/namespaces/%s/serviceaccounts",
	"/api/v1/namespaces/%s/services", "/api/v1/namespaces/%s/pods", "/api/v1/namespaces/%s/persistentvolumeclaims",
	"/api/v1/namespaces/%s/replicationcontrollers", "/api/v1/namespaces/%s/resourcequotas", "/api/v1/namespaces/%s/limitranges",
	"/api/v1/namespaces/%s/podtemplates", "/api/v1/namespaces/%s/events", "/api/v1/namespaces/%s/endpoints",
	"/apis/apps/v1/namespaces/%s/deployments", "/apis/apps/v1/namespaces/%s/replicasets", "/apis/apps/v1/namespaces/%s/statefulsets",
	"/apis/apps/v1/namespaces/%s/daemonsets", "/apis/apps/v1/namespaces/%s/controllerrevisions",
	"/apis/coordination.k8s.io/v1/namespaces/%s/leases", "/apis/autoscaling/v2/namespaces/%s/horizontalpodautoscalers",
}

// deleteNamespace deletes a test namespace. On the reference, which runs
// no namespace controller (nor garbage collector), it deletes what the
// namespace holds (finalizers removed), then finalizes it.
func (tg *target) deleteNamespace(t *testing.T, name string) {
	if *record {
		for _, collection := range recordedKinds {
			tg.deleteAll(t, fmt.Sprintf(collection, name))
		}
	}
	tg.do(t, http.MethodDelete, "/api/v1/namespaces/"+name, "", "apply-test", "")
	if !*record {
		return
	}
	// The transcript's cluster-scoped objects are named after the
	// namespace; its volume keeps kube's pv-protection finalizer.
	tg.do(t, http.MethodPatch, "/api/v1/persistentvolumes/"+name+"-pv", mergePatch, "apply-test", `{"metadata":{"finalizers":null}}`)
	for _, ns := range []string{name, name + "-ns"} {
		finalize := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q},"spec":{"finalizers":[]}}`, ns)
		tg.do(t, http.MethodPut, "/api/v1/namespaces/"+ns+"/finalize", "application/json", "apply-test", finalize)
	}
}

// deleteAll deletes every object of a collection at once, finalizers
// (pvc-protection, orphan) removed first.
func (tg *target) deleteAll(t *testing.T, collection string) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name       string   `json:"name"`
				Finalizers []string `json:"finalizers"`
			} `json:"metadata"`
		} `json:"items"`
	}
	r := tg.do(t, http.MethodGet, collection, "", "apply-test", "")
	if err := json.Unmarshal(r.body, &list); err != nil {
		return
	}
	for _, item := range list.Items {
		path := collection + "/" + item.Metadata.Name
		if len(item.Metadata.Finalizers) > 0 {
			tg.do(t, http.MethodPatch, path, mergePatch, "apply-test", `{"metadata":{"finalizers":null}}`)
		}
		tg.do(t, http.MethodDelete, path+"?gracePeriodSeconds=0&propagationPolicy=Background", "", "apply-test", "")
	}
}

// newNamespace creates a namespace on the shared server through client-go.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	_, err := clientset(t).CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}
