// Package node tests what a kubelet may do, through the real HTTP API,
// on a server run as kubeadm runs kube-apiserver
// (--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction):
// the Node authorizer's relations of nodes to the objects their pods use,
// and NodeRestriction's limits on what a node writes. A node is a client
// certificate of system:node:NAME in system:nodes. Expected messages are
// kube-apiserver v1.37.2's.
package node

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app"
	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// srv is the server the tests share.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts }, func(o *app.Options) {
		o.Auth.AuthorizationModes = []string{"Node", "RBAC"}
		o.Admission.EnablePlugins = []string{"NodeRestriction"}
	})
}

// admin is a client of the server's administrator.
func admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfig)
}

// nodeClient is a client of kubelet name: system:node:name in
// system:nodes.
func nodeClient(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(srv.ClientConfigFor(t, "system:node:"+name, "system:nodes"))
}

// fixture is one test's namespace and its two nodes' names (nodes are
// cluster-wide: each test has its own).
type fixture struct {
	ns, n1, n2 string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ns := srv.CreateNamespace(t)
	return fixture{ns: ns, n1: ns + "-n1", n2: ns + "-n2"}
}

// eventually retries check until it returns nil, for at most 10 s: the
// Node authorizer sees new pods through the watch cache, a moment after
// they are written.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantForbidden fails unless err is a 403 with message want.
func wantForbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("%s: got %v, want 403 %s", what, err, want)
	}
	if got := err.Error(); got != want {
		t.Errorf("%s:\ngot  %s\nwant %s", what, got, want)
	}
}

// createPod creates pod (as the administrator), once the namespace's
// default service account exists.
func createPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	var out *corev1.Pod
	eventually(t, "creating pod "+pod.Name, func() (err error) {
		out, err = admin(t).CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
		return err
	})
	return out
}

// pod is a pod bound to node, in ns, with spec's volumes and env.
func pod(ns, name, node string, volumes []corev1.Volume, env ...corev1.EnvVar) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Env: env}},
			Volumes:    volumes,
		},
	}
}

// createNode registers node name as the kubelet does (by itself).
func createNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := nodeClient(t, name).CoreV1().Nodes().Create(context.Background(),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("node %s registering itself: %v", name, err)
	}
	return n
}

// forbiddenMsg is kube's 403 message of user node doing verb on resource
// name in ns ("" at the cluster scope), with reason.
func forbiddenMsg(node, verb, resource, group, name, ns, reason string) string {
	gr := resource
	if group != "" {
		gr += "." + group
	}
	where := "at the cluster scope"
	if ns != "" {
		where = fmt.Sprintf("in the namespace %q", ns)
	}
	head := fmt.Sprintf("%s %q is forbidden", gr, name)
	if name == "" {
		head = gr + " is forbidden"
	}
	res := resource
	if i := strings.Index(resource, "/"); i >= 0 {
		head = strings.Replace(head, resource, resource[:i], 1)
	}
	return fmt.Sprintf("%s: User \"system:node:%s\" cannot %s resource %q in API group %q %s: %s", head, node, verb, res, group, where, reason)
}

var sprintf = fmt.Sprintf
