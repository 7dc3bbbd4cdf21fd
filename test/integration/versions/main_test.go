// Package versions tests resources served at several versions over one
// storage version, through the HTTP API with client-go's typed clients:
// horizontalpodautoscalers at autoscaling/v1 and v2 (stored at v2), events
// in the core group and in events.k8s.io (stored as core v1 Events). An
// object written at one version is read, listed, watched, patched and
// applied at the other, in JSON and in protobuf; validation, field
// selectors and discovery are each version's, as kube-apiserver v1.37.2's
// (the expected messages and annotations were recorded from it).
package versions

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares.
var srv *testserver.TestServer

// eventTTL is the shared server's --event-ttl.
const eventTTL = 90 * time.Minute

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) { o.EventTTL = eventTTL })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// encodings are the wire formats typed clients speak: protobuf (client-go's
// default for built-in kinds) and JSON.
var encodings = []struct {
	name        string
	contentType string
}{
	{"protobuf", "application/vnd.kubernetes.protobuf"},
	{"json", "application/json"},
}

// inEachEncoding runs test with a client of each encoding, in a
// namespace of its own.
func inEachEncoding(t *testing.T, test func(t *testing.T, cs kubernetes.Interface, ns string)) {
	for _, enc := range encodings {
		t.Run(enc.name, func(t *testing.T) {
			t.Parallel()
			test(t, clientset(t, enc.contentType), srv.CreateNamespace(t))
		})
	}
}

// clientset is a typed client of the shared server speaking contentType.
func clientset(t *testing.T, contentType string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(srv.ClientConfig)
	cfg.ContentType = contentType
	cfg.AcceptContentTypes = contentType
	return kubernetes.NewForConfigOrDie(cfg)
}
