package app_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// withFlags sets command line flags on the test server's options.
func withFlags(t *testing.T, args ...string) testserver.Option {
	return func(o *app.Options) {
		fs := pflagSet(o)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
	}
}

// startWithFlags starts a test server with the command line flags args.
func startWithFlags(t *testing.T, args ...string) *testserver.TestServer {
	return testserver.Start(t, withFlags(t, args...))
}

// TestRuntimeConfigServes: --runtime-config turns a group version and a
// resource off: gone from discovery, 404 when asked for; the rest is
// served.
func TestRuntimeConfigServes(t *testing.T) {
	ts := testserver.Start(t, withFlags(t, "--runtime-config=apps/v1=false,batch/v1/cronjobs=false"))
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	groups, err := client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "apps" {
			t.Errorf("apps is in discovery: %v", g)
		}
	}
	batch, err := client.Discovery().ServerResourcesForGroupVersion("batch/v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range batch.APIResources {
		if strings.HasPrefix(r.Name, "cronjobs") {
			t.Errorf("batch/v1 serves %s", r.Name)
		}
	}
	for path, want := range map[string]int{
		"/apis/apps/v1/deployments": http.StatusNotFound, "/apis/apps/v1": http.StatusNotFound,
		"/apis/batch/v1/cronjobs": http.StatusNotFound, "/apis/batch/v1/jobs": http.StatusOK,
		"/api/v1/namespaces": http.StatusOK,
	} {
		if got := get(t, ts, path); got != want {
			t.Errorf("GET %s: %d, want %d", path, got, want)
		}
	}
	if _, err := client.AppsV1().Deployments("default").List(context.Background(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("listing deployments: %v, want NotFound", err)
	}
	// Nor is it in the OpenAPI documents.
	paths, err := client.Discovery().OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := paths["apis/apps/v1"]; ok {
		t.Error("/openapi/v3 lists apis/apps/v1")
	}
	if _, ok := paths["apis/batch/v1"]; !ok {
		t.Error("/openapi/v3 lacks apis/batch/v1")
	}
	v2, err := client.Discovery().OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range v2.GetPaths().GetPath() {
		if strings.HasPrefix(p.GetName(), "/apis/apps/v1/") || strings.Contains(p.GetName(), "/cronjobs") {
			t.Errorf("/openapi/v2 has %s", p.GetName())
			break
		}
	}
}

// TestRuntimeConfigRefusesUnserved: asking on a version the server does
// not serve stops the start, naming it.
func TestRuntimeConfigRefusesUnserved(t *testing.T) {
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	o.SecurePort = 0
	o.EtcdUnsafeNoFsync = true
	if err := pflagSet(o).Parse([]string{"--runtime-config=resource.k8s.io/v1beta1=true"}); err != nil {
		t.Fatal(err)
	}
	s, err := app.Start(o)
	if err == nil {
		s.Stop()
		t.Fatal("started")
	}
	if want := "--runtime-config: resource.k8s.io/v1beta1=true: not supported by miniapiserver"; !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// TestServiceNodePortRange: node ports come from the range, and one
// outside it is refused as kube refuses it.
func TestServiceNodePortRange(t *testing.T) {
	ts := testserver.Start(t, withFlags(t, "--service-node-port-range=31000-31002"))
	client := kubernetes.NewForConfigOrDie(ts.ClientConfig)
	svc := func(name string, port int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80), NodePort: port}}}}
	}
	got, err := client.CoreV1().Services("default").Create(context.Background(), svc("auto", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.Ports[0].NodePort; p < 31000 || p > 31002 {
		t.Errorf("node port %d, want one of 31000-31002", p)
	}
	_, err = client.CoreV1().Services("default").Create(context.Background(), svc("outside", 30080), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "provided port is not in the valid range. The range of valid ports is 31000-31002") {
		t.Errorf("node port outside the range: %v, want kube's Invalid", err)
	}
}

func get(t *testing.T, ts *testserver.TestServer, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+ts.Token)
	resp, err := ts.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// pflagSet is a flag set of the command's flags, set on o.
func pflagSet(o *app.Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("miniapiserver", pflag.ContinueOnError)
	o.AddFlags(fs)
	return fs
}

// TestGoawayChance: with --goaway-chance, the server ends HTTP/2
// connections with a GOAWAY frame now and then, after answering the
// request (1000 requests at 2%: about 20; none at all has a chance of
// 2e-9), and the stream in flight still gets its response.
func TestGoawayChance(t *testing.T) {
	ts := startWithFlags(t, "--goaway-chance=0.02")
	u, _ := url.Parse(ts.URL)
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	for i := range 1000 {
		stream := uint32(2*i + 1)
		hbuf.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", u.Host}, {":path", "/version"},
			{"authorization", "Bearer " + ts.Token}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: hbuf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		if goaway := readResponse(t, fr, stream); goaway {
			return
		}
	}
	t.Fatal("no GOAWAY in 1000 requests")
}

// readResponse reads frames until stream's response ends, and reports
// whether a GOAWAY came meanwhile (the stream still ends first).
func readResponse(t *testing.T, fr *http2.Framer, stream uint32) (goaway bool) {
	t.Helper()
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("stream %d: %v", stream, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			goaway = true
		case *http2.RSTStreamFrame:
			t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *http2.HeadersFrame:
			if f.StreamID == stream && f.StreamEnded() {
				return goaway
			}
		case *http2.DataFrame:
			// Give the flow control windows back, or the server stops
			// sending after 64 KiB.
			if n := uint32(len(f.Data())); n > 0 {
				_ = fr.WriteWindowUpdate(0, n)
			}
			if f.StreamID == stream && f.StreamEnded() {
				return goaway
			}
		}
	}
}
