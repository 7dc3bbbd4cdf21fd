// Package resource tests resource.k8s.io/v1 (Dynamic Resource
// Allocation) through the HTTP API of a test server: deviceclasses,
// resourceclaims and their status, resourceclaimtemplates,
// resourceslices and devicetaintrules, with client-go's typed clients and
// informers (as kube-scheduler's DRA plugin and the resourceclaim
// controller use them), and raw requests whose answers are compared with
// what kube-apiserver v1.37.2 answered to the same requests
// (testdata/kube, recorded with -record).
package resource

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
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

// client is a typed client of the shared server (protobuf, client-go's
// default for built-in kinds).
func client(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}
