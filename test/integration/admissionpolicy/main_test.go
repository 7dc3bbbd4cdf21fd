// Package admissionpolicy tests ValidatingAdmissionPolicies and their
// bindings through the real HTTP API of one shared test server: raw HTTP
// transcripts whose Status bodies and warnings are compared with a
// reference kube-apiserver v1.37.2 (recorded with -record, $PEER_URL and
// $PEER_TOKEN set), and client-go for what the transcripts cannot show.
package admissionpolicy

import (
	"context"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

const userAgent = "admissionpolicy-test"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
