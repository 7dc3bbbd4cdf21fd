// Package nodeproxy tests the subresources that reach kubelets, pods and
// services (pods/log, exec, attach, portforward, proxy; nodes/proxy;
// services/proxy) through the real server, with client-go, kubectl and
// raw requests, against fake kubelets served by the test over HTTPS. The
// error statuses were recorded from kube-apiserver v1.37.2 with a Node
// whose address nothing listens on.
package nodeproxy

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

var (
	srv *testserver.TestServer
	// kubelet is a fake kubelet on loopback; remote one on an address of
	// this machine that is not (nil without one): the server proxies to
	// nodes and pods only at global unicast addresses, as kube does.
	kubelet, remote *fakeKubelet
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	flag.Parse()
	dir, err := os.MkdirTemp("", "nodeproxy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pki, err := newKubeletPKI(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var stop func()
	if kubelet, stop, err = startKubelet(pki, net.IPv4(127, 0, 0, 1)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	if ip := globalUnicastIP(); ip != nil {
		if remote, stop, err = startKubelet(pki, ip); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
	}
	srv, err = testserver.New(filepath.Join(dir, "server"), func(o *app.Options) {
		o.Kubelet.ClientCertificate, o.Kubelet.ClientKey = pki.clientCert, pki.clientKey
		o.Kubelet.CertificateAuthority = pki.servingCA
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Server.Stop()
	return m.Run()
}

// globalUnicastIP is an IPv4 address of this machine that the server may
// proxy to, or nil.
func globalUnicastIP() net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.To4()
		}
	}
	return nil
}

func needRemote(t *testing.T) {
	t.Helper()
	if remote == nil {
		t.Skip("this machine has no global unicast IPv4 address: nothing to proxy to")
	}
}

func clientset(t testing.TB) *kubernetes.Clientset {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// createNode creates a cluster-scoped Node for the test, whose status
// gives addresses and kubelet port, and deletes it at cleanup.
func createNode(t testing.TB, addresses []corev1.NodeAddress, port int) string {
	t.Helper()
	ctx := context.Background()
	cs := clientset(t)
	name := testserver.NamespaceName(t)
	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	node.Status.Addresses = addresses
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// kubeletNode is a Node whose kubelet is k.
func kubeletNode(t testing.TB, k *fakeKubelet) string {
	t.Helper()
	return createNode(t, []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.addr.IP.String()}}, k.addr.Port)
}

// createPod creates a pod on node ("": not scheduled) with the named
// containers; one on a node is running, with pod IP ip when it is set.
func createPod(t testing.TB, ns, name, node, ip string, containers ...corev1.Container) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	for i := range containers {
		containers[i].Image = "registry.k8s.io/pause:3.10"
	}
	pod, err := clientset(t).CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: containers},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if node != "" {
		// Its kubelet runs it (kubectl port-forward wants it running).
		pod.Status.Phase = corev1.PodRunning
		if ip != "" {
			pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		}
		if pod, err = clientset(t).CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return pod
}

func containers(names ...string) []corev1.Container {
	out := make([]corev1.Container, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

// http1 sends a raw request as the administrator over HTTP/1.1 (upgrade
// requests cannot go over HTTP/2), headers given as "Name: value".
func http1(t *testing.T, method, path string, headers ...string) (int, string) {
	t.Helper()
	tlsConfig, err := rest.TLSConfigFor(srv.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}, Timeout: 30 * time.Second}
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// kubectl runs kubectl against the server (the test is skipped when it
// is not installed); it returns stdout and, on failure, stderr.
func kubectl(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", srv.Server.KubeconfigPath}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, stderr.String())
	}
	return string(out), nil
}
