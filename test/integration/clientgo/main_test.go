// Package clientgo uses client-go 0.37 against one shared miniapiserver
// the way controllers and tools do: typed clientsets (protobuf), the
// dynamic and metadata clients, informers with and without WatchList,
// the pager, the retry watcher, server-side apply configurations, leader
// election, the scale client, discovery (cached, aggregated) and its
// REST mapper, and event recorders.
//
// With -reference the same tests run against the kube-apiserver named by
// $PEER_URL (token $PEER_TOKEN), to check that what they expect is what
// kube does; the few that check what only this server serves skip there.
package clientgo

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares.
var srv *testserver.TestServer

var reference = flag.Bool("reference", false, "run against the kube-apiserver at $PEER_URL (token $PEER_TOKEN) instead")

// config reaches the server under test as its administrator: the shared
// server, or the reference with -reference.
func config() *rest.Config {
	if *reference {
		return &rest.Config{
			Host: os.Getenv("PEER_URL"), BearerToken: os.Getenv("PEER_TOKEN"),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1, Burst: -1,
		}
	}
	return rest.CopyConfig(srv.ClientConfig)
}

// onlyHere skips a test that checks what only this server serves (its
// groups, its watch cache sizes) when running against the reference.
func onlyHere(t *testing.T) {
	t.Helper()
	if *reference {
		t.Skip("checks this server's own configuration")
	}
}

func TestMain(m *testing.M) {
	flag.Parse()
	if *reference && (os.Getenv("PEER_URL") == "" || os.Getenv("PEER_TOKEN") == "") {
		fmt.Fprintln(os.Stderr, "-reference needs $PEER_URL and $PEER_TOKEN (source /tmp/peer.env)")
		os.Exit(2)
	}
	// The tests list v1 Endpoints, whose deprecation warning client-go
	// would log.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	// The watch cache of podtemplates keeps ten events, so that a watch
	// from an older revision meets kube's 410 (TestRetryWatcher).
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) { o.WatchCacheSizes = []string{"podtemplates#10"} })
}

// clientset is a typed client of the shared server, with client-go's
// defaults (protobuf).
func clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(config())
}

// ctx is a context for a test's requests, ended with the test.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// namespace creates a namespace of its own for a test.
func namespace(t testing.TB) string {
	t.Helper()
	if !*reference {
		return srv.CreateNamespace(t)
	}
	name := testserver.NamespaceName(t)
	name = fmt.Sprintf("%s-%d", strings.TrimRight(name[:min(len(name), 50)], "-"), time.Now().UnixNano()%1e6)
	_, err := clientset(t).CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	emulateControllers(t, name)
	t.Cleanup(func() { cleanReference(t, name) })
	return name
}

// waitFor polls cond every 10ms for up to 20s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	waitForWithin(t, 20*time.Second, what, cond)
}

func waitForWithin(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// exchange is what a recorded client sent and got back.
type exchange struct {
	method, url         string
	contentType, accept string
	code                int
	responseType        string
}

// recorder keeps the exchanges of a client.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

// find returns the exchanges whose URL contains every part.
func (r *recorder) find(parts ...string) []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []exchange
	for _, e := range r.exchanges {
		match := true
		for _, p := range parts {
			match = match && strings.Contains(e.url, p)
		}
		if match {
			out = append(out, e)
		}
	}
	return out
}

type recordingTransport struct {
	rec  *recorder
	next http.RoundTripper
}

func (rt recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	e := exchange{method: req.Method, url: req.URL.String(), contentType: req.Header.Get("Content-Type"), accept: req.Header.Get("Accept")}
	if err == nil {
		e.code, e.responseType = resp.StatusCode, resp.Header.Get("Content-Type")
	}
	rt.rec.mu.Lock()
	rt.rec.exchanges = append(rt.rec.exchanges, e)
	rt.rec.mu.Unlock()
	return resp, err
}

// recordedConfig is the shared server's client configuration with every
// exchange recorded.
func recordedConfig() (*rest.Config, *recorder) {
	rec := &recorder{}
	cfg := config()
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return recordingTransport{rec: rec, next: next} })
	return cfg, rec
}
