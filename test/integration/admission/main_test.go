// Package admission tests admission webhooks through the HTTP API and
// client-go: a webhook server of the test's own over HTTPS (its own CA)
// refuses, allows, patches, fails and stalls, for built-in and custom
// resources, against one shared server. Every configuration selects its
// test's namespace only (kubernetes.io/metadata.name), so that tests run
// in parallel.
//
// With -reference the tests run against the kube-apiserver named by
// $PEER_URL (token $PEER_TOKEN): what they expect is what kube does.
package admission

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var srv *testserver.TestServer

var reference = flag.Bool("reference", false, "run against the kube-apiserver at $PEER_URL (token $PEER_TOKEN) instead")

func TestMain(m *testing.M) {
	flag.Parse()
	if *reference && (os.Getenv("PEER_URL") == "" || os.Getenv("PEER_TOKEN") == "") {
		fmt.Fprintln(os.Stderr, "-reference needs $PEER_URL and $PEER_TOKEN")
		os.Exit(2)
	}
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

// config reaches the server under test as its administrator.
func config() *rest.Config {
	if *reference {
		return &rest.Config{
			Host: os.Getenv("PEER_URL"), BearerToken: os.Getenv("PEER_TOKEN"),
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1, Burst: -1,
		}
	}
	return rest.CopyConfig(srv.ClientConfig)
}

func clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(config())
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
