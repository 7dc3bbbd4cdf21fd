package nodeproxy

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestNodeProxy passes requests through nodes/proxy to the kubelet (with
// the server's client certificate), keeping method, path and query.
func TestNodeProxy(t *testing.T) {
	t.Parallel()
	needRemote(t)
	node := kubeletNode(t, remote)
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		code, body := http1(t, method, "/api/v1/nodes/"+node+"/proxy/healthz?verbose=1")
		if want := "ok " + method + " /healthz?verbose=1"; code != 200 || body != want {
			t.Errorf("%s nodes/proxy/healthz = %d %q, want 200 %q", method, code, body, want)
		}
	}
	// The kubelet's own port, named, is the same kubelet.
	port := strconv.Itoa(remote.addr.Port)
	if code, body := http1(t, "GET", "/api/v1/nodes/https:"+node+":"+port+"/proxy/healthz"); code != 200 || !strings.HasPrefix(body, "ok GET") {
		t.Errorf("nodes/https:NODE:PORT/proxy/healthz = %d %q", code, body)
	}
}

// TestPodProxy passes requests through pods/proxy to the pod's IP, at the
// port the name gives or its first declared container port.
func TestPodProxy(t *testing.T) {
	t.Parallel()
	needRemote(t)
	ns := srv.CreateNamespace(t)
	addr := serveHTTP(t, remote.addr.IP)
	c := containers("web")
	c[0].Ports = []corev1.ContainerPort{{ContainerPort: int32(addr.Port)}}
	createPod(t, ns, "web", kubeletNode(t, kubelet), addr.IP.String(), c...)

	base := "/api/v1/namespaces/" + ns + "/pods/"
	for path, want := range map[string]string{
		base + "web/proxy/hello?q=1":                            "POST /hello?q=1",
		base + "web:" + strconv.Itoa(addr.Port) + "/proxy/a/":   "POST /a/",
		base + "http:web:" + strconv.Itoa(addr.Port) + "/proxy": "POST /",
	} {
		if code, body := http1(t, "POST", path); code != 200 || body != want {
			t.Errorf("POST %s = %d %q, want 200 %q", path, code, body, want)
		}
	}
}

// serveHTTP serves, on ip until the test ends, an HTTP server that
// answers with the method and URI it got.
func serveHTTP(t *testing.T, ip net.IP) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.RequestURI())
	})}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	return ln.Addr().(*net.TCPAddr)
}
