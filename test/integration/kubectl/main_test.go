// Package kubectl runs the real kubectl against one shared miniapiserver:
// the commands a user types (create, get in every output, watch, label,
// annotate, patch, apply, replace, scale, edit, diff, delete, wait,
// rollout status, the generators, expose, set, describe, events), each
// checked on what kubectl prints and on the objects it leaves.
//
// The expectations come from a reference kube-apiserver v1.37.2: the
// scenarios are recorded against it with -record (see target) into
// testdata/*.json, and replayed here, with ages, times, identities,
// addresses and the test namespace normalised (see normalize).
package kubectl

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// record makes the scenarios run against the kube-apiserver named by
// $PEER_URL (token $PEER_TOKEN) and write what kubectl printed into
// testdata, instead of checking this server.
var record = flag.Bool("record", false, "record testdata from the kube-apiserver at $PEER_URL (token $PEER_TOKEN)")

// srv is the server every test of the package shares.
var srv *testserver.TestServer

// cacheDir holds kubectl's discovery and HTTP caches: one of the
// package's own, so that no cache of an earlier server on the same port
// is read.
var cacheDir string

func TestMain(m *testing.M) {
	// The tests list v1 Endpoints, whose deprecation warning client-go
	// would log.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	testserver.Main(m, func(ts *testserver.TestServer, scratch string) {
		srv = ts
		cacheDir = scratch + "/kubectl-cache"
		warmOpenAPIV2(ts)
	})
}

// warmOpenAPIV2 asks for /openapi/v2 as kubectl does (protobuf) before
// any test runs. The server encodes it on the first request, as kube's
// does: seconds under -race, and on a loaded machine more than the 32 s
// kubectl waits, which failed the first scenario that validates.
func warmOpenAPIV2(ts *testserver.TestServer) {
	transport, err := rest.TransportFor(ts.ClientConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warming /openapi/v2:", err)
		return
	}
	req, err := http.NewRequest(http.MethodGet, ts.URL+"/openapi/v2", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warming /openapi/v2:", err)
		return
	}
	req.Header.Set("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	resp, err := (&http.Client{Transport: transport, Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "warming /openapi/v2:", err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// needKubectl skips a test when kubectl is not installed.
func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl tests")
	}
}
