package nodeproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/rest"
)

// TestKubectlExec runs a command with stdin through pods/exec: kubectl
// tries WebSocket, which the fake kubelet refuses (the server passes the
// refusal back), then SPDY, whose streams pass both ways.
func TestKubectlExec(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "shell", node, "", containers("main", "other")...)

	out, err := kubectl(t, "hello from stdin\n", "exec", "-n", ns, "shell", "-c", "other", "-i", "--", "cat", "-n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "other ran [\"cat\" \"-n\"]\nhello from stdin\n"; out != want {
		t.Errorf("kubectl exec = %q, want %q", out, want)
	}
}

// TestKubectlPortForward forwards a local port to the pod through
// pods/portforward (SPDY) and exchanges data both ways.
func TestKubectlPortForward(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "db", node, "", containers("db")...)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", srv.Server.KubeconfigPath,
		"port-forward", "-n", ns, "pod/db", "--address", "127.0.0.1", ":5432")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	m := regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> 5432`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("kubectl port-forward said %q (%v), stderr %q", line, err, stderr.String())
	}
	conn, err := net.DialTimeout("tcp", m[1], 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte("select 1")); err != nil {
		t.Fatal(err)
	}
	want := "port 5432: SELECT 1"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != want {
		t.Errorf("through the forwarded port: %q, %v; want %q (kubectl: %s)", got, err, want, stderr.String())
	}
}

// TestAttachWebSocket attaches over WebSocket: the server passes the
// upgrade to the kubelet and the frames through both ways.
func TestAttachWebSocket(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "tty", node, "", containers("main")...)

	tlsConfig, err := rest.TLSConfigFor(srv.ClientConfig)
	if err != nil {
		t.Fatal(err)
	}
	dialer := websocket.Dialer{TLSClientConfig: tlsConfig, Subprotocols: []string{remotecommand.StreamProtocolV5Name},
		HandshakeTimeout: 30 * time.Second}
	if tlsConfig == nil {
		dialer.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test server's own certificate
	}
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/api/v1/namespaces/" + ns + "/pods/tty/attach?stdin=true&stdout=true"
	conn, resp, err := dialer.Dial(url, http.Header{"Authorization": {"Bearer " + srv.Token}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer conn.Close()
	if conn.Subprotocol() != remotecommand.StreamProtocolV5Name {
		t.Errorf("subprotocol = %q", conn.Subprotocol())
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for _, msg := range []string{"one", "two"} {
		if err := conn.WriteMessage(websocket.BinaryMessage, append([]byte{remotecommand.StreamStdIn}, msg...)); err != nil {
			t.Fatal(err)
		}
		_, got, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if want := string(append([]byte{remotecommand.StreamStdOut}, "echo "+msg...)); string(got) != want {
			t.Errorf("frame = %q, want %q", got, want)
		}
	}
}
