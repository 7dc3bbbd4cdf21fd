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
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
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

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(srv.ClientConfig)
}

// target is a server the raw tests speak to: the shared server, or the
// reference when recording.
type target struct{ *reference.Target }

func testTarget(t *testing.T) *target { return &target{reference.For(t, srv)} }

// do sends a request as the administrator; userAgent "" sends none.
func (tg *target) do(t *testing.T, method, path, contentType, userAgent string, body string) reference.Response {
	t.Helper()
	return tg.Do(t, reference.Request{Method: method, Path: path, ContentType: contentType, UserAgent: userAgent, Body: body})
}

var nsCounter atomic.Int64

// namespace creates a namespace for one test on tg (named uniquely when
// recording, so that a recording never meets an earlier one's objects),
// and deletes it when the test ends.
func (tg *target) namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	if *reference.Record {
		name = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	}
	tg.CreateNamespace(t, name, "apply-test")
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
	if *reference.Record {
		for _, collection := range recordedKinds {
			tg.DeleteAll(t, fmt.Sprintf(collection, name), "apply-test", nil)
		}
	}
	tg.do(t, http.MethodDelete, "/api/v1/namespaces/"+name, "", "apply-test", "")
	if *reference.Record {
		// The transcript's cluster-scoped objects are named after the
		// namespace; its volume keeps kube's pv-protection finalizer.
		tg.do(t, http.MethodPatch, "/api/v1/persistentvolumes/"+name+"-pv", mergePatch, "apply-test", `{"metadata":{"finalizers":null}}`)
	}
	tg.FinalizeNamespaces(t, "apply-test", name, name+"-ns")
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
