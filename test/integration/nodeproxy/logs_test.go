package nodeproxy

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestLogs reads a container's log through pods/log: the server finds the
// kubelet of the pod's node, passes the options on, and presents its
// client certificate, verifying the kubelet's.
func TestLogs(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "two", node, "", containers("c1", "c2")...)

	req := clientset(t).CoreV1().Pods(ns).GetLogs("two", &corev1.PodLogOptions{Container: "c2", TailLines: ptr.To[int64](2), Timestamps: true})
	got, err := req.DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "two/c2 line 4\ntwo/c2 line 5\nquery: tailLines=2&timestamps=true\n"
	if string(got) != want {
		t.Errorf("log = %q, want %q", got, want)
	}
	if names := kubelet.clientNames(); !slices.Contains(names, clientName) {
		t.Errorf("the kubelet saw client certificates %v, want %s", names, clientName)
	}
}

// TestLogsFollow reads a followed log as it is written: the server
// flushes each piece of the kubelet's answer to the client at once.
func TestLogsFollow(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "followed", node, "", containers("app")...)
	release := kubelet.hold("followed")

	stream, err := clientset(t).CoreV1().Pods(ns).GetLogs("followed", &corev1.PodLogOptions{Follow: true}).Stream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	r := bufio.NewReader(stream)
	// The kubelet writes the rest only once this line has arrived.
	first, err := r.ReadString('\n')
	if err != nil || first != "followed/app line 1\n" {
		t.Fatalf("first line = %q, %v", first, err)
	}
	release()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(rest), "followed/app line 5\nquery: follow=true\n") {
		t.Errorf("rest of the log = %q", rest)
	}
}

// TestKubectlLogs runs kubectl logs with -c, --tail and -f.
func TestKubectlLogs(t *testing.T) {
	t.Parallel()
	ns := srv.CreateNamespace(t)
	node := kubeletNode(t, kubelet)
	createPod(t, ns, "web", node, "", containers("nginx", "sidecar")...)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "sidecar", "--tail=1"}, "web/sidecar line 5\nquery: tailLines=1\n"},
		{[]string{"-c", "nginx", "-f"}, "web/nginx line 1\nweb/nginx line 2\nweb/nginx line 3\nweb/nginx line 4\nweb/nginx line 5\nquery: follow=true\n"},
	} {
		out, err := kubectl(t, "", append([]string{"logs", "-n", ns, "web"}, tc.args...)...)
		if err != nil || out != tc.want {
			t.Errorf("kubectl logs %v = %q, %v; want %q", tc.args, out, err, tc.want)
		}
	}
	// Without -c, kubectl names the pod's default container (its first).
	if out, err := kubectl(t, "", "logs", "-n", ns, "web", "--tail=0"); err != nil || out != "query: tailLines=0\n" {
		t.Errorf("kubectl logs --tail=0 = %q, %v", out, err)
	}
}
