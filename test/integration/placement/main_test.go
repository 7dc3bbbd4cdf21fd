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
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

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

// target is a server the raw tests speak to: the shared server, or the
// reference when recording.
type target struct{ *reference.Target }

func testTarget(t *testing.T) *target { return &target{reference.For(t, srv)} }

// do sends a request as the administrator, with a JSON body (or patch)
// when body is not empty.
func (tg *target) do(t *testing.T, method, path, contentType, accept, body string) reference.Response {
	t.Helper()
	return tg.Do(t, reference.Request{Method: method, Path: path, ContentType: contentType, Accept: accept, UserAgent: "placement-test", Body: body})
}

// namespace creates a namespace for one test on tg (named uniquely when
// recording, so that a recording never meets an earlier one's objects);
// cluster-scoped objects of the test carry its name too. Both go when the
// test ends.
func (tg *target) namespace(t *testing.T) string {
	t.Helper()
	name := testserver.NamespaceName(t)
	if *reference.Record {
		name = fmt.Sprintf("%s-%d", name[:min(len(name), 40)], time.Now().UnixNano()%1e9)
	}
	tg.CreateNamespace(t, name, "placement-test")
	t.Cleanup(func() {
		for _, collection := range clusterCollections {
			tg.DeleteAll(t, collection, "placement-test", func(object string) bool { return strings.Contains(object, name) })
		}
		tg.do(t, http.MethodDelete, "/api/v1/namespaces/"+name, "", "", "")
		tg.FinalizeNamespaces(t, "placement-test", name)
	})
	return name
}

// clusterCollections are the cluster-scoped collections tests write to.
var clusterCollections = []string{
	"/apis/storage.k8s.io/v1/storageclasses", "/apis/storage.k8s.io/v1/csidrivers", "/apis/storage.k8s.io/v1/csinodes",
	"/apis/storage.k8s.io/v1/volumeattachments", "/apis/storage.k8s.io/v1/volumeattributesclasses",
	"/apis/scheduling.k8s.io/v1/priorityclasses", "/apis/node.k8s.io/v1/runtimeclasses", "/api/v1/persistentvolumes",
}
