// Package policy tests poddisruptionbudgets (policy/v1) and the eviction
// subresource of pods that honours them, through the real HTTP
// API of one shared test server: client-go's typed clients, raw HTTP for
// exact bodies, and kubectl where it is installed.
//
// The expectations come from a reference kube-apiserver v1.37.2: the
// transcripts and kubectl outputs are recorded against it (-record, with
// $PEER_URL and $PEER_TOKEN set) into testdata and replayed here, times
// and identities normalised.
package policy

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server every test of the package shares.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

const userAgent = "policy-test"

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
