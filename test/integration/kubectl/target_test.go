package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// target is the server kubectl speaks to: the shared test server, or the
// reference kube-apiserver when recording.
type target struct {
	kubeconfig string
	cs         kubernetes.Interface
	dyn        dynamic.Interface
}

// testTarget is the shared server, or with -record the reference at
// $PEER_URL.
func testTarget(t *testing.T) *target {
	t.Helper()
	cfg := srv.ClientConfig
	kubeconfig := srv.Server.KubeconfigPath
	if *record {
		url, token := os.Getenv("PEER_URL"), os.Getenv("PEER_TOKEN")
		if url == "" || token == "" {
			t.Fatal("-record needs $PEER_URL and $PEER_TOKEN (source /tmp/peer.env)")
		}
		cfg = &rest.Config{Host: url, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
		kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
		content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: reference
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: reference
  context: {cluster: reference, user: admin}
current-context: reference
`, url, token)
		if err := os.WriteFile(kubeconfig, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &target{kubeconfig: kubeconfig, cs: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg)}
}

var nsCounter atomic.Int64

// namespace creates a namespace for a test (named uniquely when
// recording, so that a recording never meets an earlier one's objects)
// and deletes it, with the cluster-scoped objects named after it, when
// the test ends. On the reference, which runs no controller manager, it
// also creates what kube's controllers put in every namespace: the
// ServiceAccount "default" and the ConfigMap "kube-root-ca.crt".
func (tg *target) namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsCounter.Add(1))
	if *record {
		name = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e6)
	}
	c := context.Background()
	if _, err := tg.cs.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { tg.deleteNamespace(t, name) })
	if !*record {
		return name
	}
	manager := metav1.CreateOptions{FieldManager: "kube-controller-manager"}
	if _, err := tg.cs.CoreV1().ServiceAccounts(name).Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, manager); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Annotations: map[string]string{
			"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.",
		}},
		Data: map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"},
	}
	if _, err := tg.cs.CoreV1().ConfigMaps(name).Create(c, cm, manager); err != nil {
		t.Fatal(err)
	}
	return name
}

// deleteNamespace deletes a test namespace and the cluster-scoped objects
// whose names start with it. The reference finishes no deletion by
// itself: there, what the namespace holds is deleted first (finalizers
// removed), then the namespace is finalized.
func (tg *target) deleteNamespace(t *testing.T, name string) {
	c := context.Background()
	for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "nodes"}, {Version: "v1", Resource: "persistentvolumes"}, {Version: "v1", Resource: "namespaces"}} {
		list, err := tg.dyn.Resource(gvr).List(c, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, item := range list.Items {
			if strings.HasPrefix(item.GetName(), name+"-") {
				tg.forceDelete(c, tg.dyn.Resource(gvr), item.GetName(), len(item.GetFinalizers()) > 0)
			}
		}
	}
	if *record {
		for _, gvr := range namespacedResources(t) {
			list, err := tg.dyn.Resource(gvr).Namespace(name).List(c, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, item := range list.Items {
				tg.forceDelete(c, tg.dyn.Resource(gvr).Namespace(name), item.GetName(), len(item.GetFinalizers()) > 0)
			}
		}
	}
	if err := tg.cs.CoreV1().Namespaces().Delete(c, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", name, err)
	}
	if *record {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		tg.cs.CoreV1().Namespaces().Finalize(c, ns, metav1.UpdateOptions{}) //nolint:errcheck // best effort on the reference
	}
}

// forceDelete deletes an object at once, its finalizers removed first.
func (tg *target) forceDelete(c context.Context, client dynamic.ResourceInterface, name string, finalizers bool) {
	if finalizers {
		client.Patch(c, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}) //nolint:errcheck // best effort
	}
	zero := int64(0)
	client.Delete(c, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}) //nolint:errcheck // best effort
}

// namespacedResources are the namespaced resources the shared server
// serves (the reference serves more; the tests write only these).
func namespacedResources(t *testing.T) []schema.GroupVersionResource {
	lists, err := kubernetes.NewForConfigOrDie(srv.ClientConfig).Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.GroupVersionResource
	for _, list := range lists {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		for _, r := range list.APIResources {
			if !strings.Contains(r.Name, "/") && strings.Contains(strings.Join(r.Verbs, ","), "delete") {
				out = append(out, gv.WithResource(r.Name))
			}
		}
	}
	return out
}

// invocation is one run of kubectl.
type invocation struct {
	args  []string
	stdin string
	env   []string
}

// run runs kubectl against tg and returns what it printed, stdout then
// stderr, followed by its exit status when it failed: a failing command
// is part of a scenario, not a failure of the test. It gives up after
// 60s.
func (tg *target) run(t *testing.T, inv invocation) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := tg.command(c, inv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if c.Err() != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(inv.args, " "), c.Err(), stdout.String(), stderr.String())
	}
	out := stdout.String() + stderr.String()
	if exit, ok := err.(*exec.ExitError); ok {
		out += fmt.Sprintf("(exit %d)\n", exit.ExitCode())
	} else if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(inv.args, " "), err)
	}
	return out
}

// command is the kubectl command of an invocation against tg: its
// kubeconfig and cache, the environment without the variables that
// change kubectl's behaviour, plus the invocation's.
func (tg *target) command(c context.Context, inv invocation) *exec.Cmd {
	args := append([]string{"--kubeconfig", tg.kubeconfig, "--cache-dir", cacheDir}, inv.args...)
	cmd := exec.CommandContext(c, "kubectl", args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "KUBECTL_") && !strings.HasPrefix(kv, "EDITOR=") && !strings.HasPrefix(kv, "KUBE_EDITOR=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, inv.env...)
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	return cmd
}
