// Package placement tests the API groups that decide where pods and their
// volumes go (storage.k8s.io, scheduling.k8s.io, node.k8s.io) and the
// admission steps built on them, through the real HTTP API of one shared
// test server: client-go's typed clients, and raw HTTP for exact bodies.
//
// The expectations come from a reference kube-apiserver v1.37.2: the
// transcript is recorded against it (see -record) into testdata and
// replayed here, times and identities normalised.
package placement

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// record makes the transcript run against the reference kube-apiserver
// named by $PEER_URL (token $PEER_TOKEN) and write what it answered into
// testdata, instead of checking this server.
var record = flag.Bool("record", false, "record testdata from the kube-apiserver at $PEER_URL (token $PEER_TOKEN)")

// srv is the server every test of the package shares.
var srv *testserver.TestServer

// serialDefault is held by a test while it has a globalDefault priority
// class (or a default storage class) on the shared server, and by tests
// whose new pods (or claims) must not get one.
var serialDefault sync.Mutex

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

// target is a server the raw tests speak to: this package's, or the
// reference when recording.
type target struct {
	url, token string
	client     *http.Client
}

// testTarget is the shared test server, or the reference with -record.
func testTarget(t *testing.T) *target {
	t.Helper()
	if !*record {
		return &target{url: srv.URL, token: srv.Token, client: srv.HTTPClient(t)}
	}
	url, token := os.Getenv("PEER_URL"), os.Getenv("PEER_TOKEN")
	if url == "" || token == "" {
		t.Fatal("-record needs $PEER_URL and $PEER_TOKEN")
	}
	return &target{url: url, token: token,
		client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}, //nolint:gosec // the reference on loopback
	}
}

// response is what a raw request got back.
type response struct {
	code     int
	body     []byte
	warnings []string
}

// do sends a request as the administrator, with a JSON body (or patch)
// when body is not empty.
func (tg *target) do(t *testing.T, method, path, contentType, accept, body string) response {
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
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "placement-test")
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

// namespace creates a namespace for one test on tg (named uniquely when
// recording, so that a recording never meets an earlier one's objects);
// cluster-scoped objects of the test carry its name too. Both go when the
// test ends.
func (tg *target) namespace(t *testing.T) string {
	t.Helper()
	name := testserver.NamespaceName(t)
	if *record {
		name = fmt.Sprintf("%s-%d", name[:min(len(name), 40)], time.Now().UnixNano()%1e9)
	}
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, name)
	if r := tg.do(t, http.MethodPost, "/api/v1/namespaces", "application/json", "", ns); r.code != http.StatusCreated {
		t.Fatalf("creating namespace %s: %d %s", name, r.code, r.body)
	}
	if *record {
		// The reference runs no controller manager: pods need their
		// service account made by hand.
		sa := `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`
		tg.do(t, http.MethodPost, "/api/v1/namespaces/"+name+"/serviceaccounts", "application/json", "", sa)
	}
	t.Cleanup(func() { tg.cleanup(t, name) })
	return name
}

// clusterCollections are the cluster-scoped collections tests write to.
var clusterCollections = []string{
	"/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csinodes",
	"/apis/storage.k8s.io/v1/volumeattachments", "/apis/storage.k8s.io/v1/volumeattributesclasses",
	"/apis/scheduling.k8s.io/v1/priorityclasses", "/apis/node.k8s.io/v1/runtimeclasses", "/api/v1/persistentvolumes",
}

// cleanup deletes the test's cluster-scoped objects (finalizers removed
// first: the reference runs no controller to remove them), then its
// namespace, finished at once on the reference.
func (tg *target) cleanup(t *testing.T, ns string) {
	for _, collection := range clusterCollections {
		var list struct {
			Items []struct {
				Metadata struct {
					Name       string   `json:"name"`
					Finalizers []string `json:"finalizers"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(tg.do(t, http.MethodGet, collection, "", "", "").body, &list); err != nil {
			continue
		}
		for _, item := range list.Items {
			if !strings.Contains(item.Metadata.Name, ns) {
				continue
			}
			path := collection + "/" + item.Metadata.Name
			if len(item.Metadata.Finalizers) > 0 {
				tg.do(t, http.MethodPatch, path, mergePatch, "", `{"metadata":{"finalizers":null}}`)
			}
			tg.do(t, http.MethodDelete, path, "", "", "")
		}
	}
	tg.do(t, http.MethodDelete, "/api/v1/namespaces/"+ns, "", "", "")
	if *record {
		finalize := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q},"spec":{"finalizers":[]}}`, ns)
		tg.do(t, http.MethodPut, "/api/v1/namespaces/"+ns+"/finalize", "application/json", "", finalize)
	}
}
