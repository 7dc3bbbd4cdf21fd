// Package controlplane tests the API groups of the control plane's own
// objects through the real HTTP API of one shared test server:
// certificates.k8s.io, admissionregistration.k8s.io,
// flowcontrol.apiserver.k8s.io and storagemigration.k8s.io, with
// client-go and raw requests. Expected codes, Status bodies and defaults
// come from a reference kube-apiserver v1.37.2 (testdata/*.json,
// re-recorded with -record-from).
package controlplane

import (
	"context"
	"flag"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

var (
	recordFrom  = flag.String("record-from", "", "URL of a kube-apiserver v1.37.2 to record the transcripts of testdata from (rewrites them)")
	recordToken = flag.String("record-token", "", "bearer token of -record-from")
	// recordUser is the name (and UID) of -record-token's user, which the
	// recorded answers show where this server shows its administrator's.
	recordUser = flag.String("record-user", "bench-admin", "name of -record-token's user")
)

func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
