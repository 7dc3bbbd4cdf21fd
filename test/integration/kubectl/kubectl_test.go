// Package kubectl runs the real kubectl against a miniapiserver, with the
// kubeconfig the server writes at startup.
package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

// kubectl runs kubectl with the server's kubeconfig and returns its
// output; a failure fails the test.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func wantContains(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl smoke test")
	}
	srv := testserver.Start(t)
	kc := srv.Server.KubeconfigPath
	if kc == "" {
		t.Fatal("the server wrote no kubeconfig")
	}
	ns := "kubectl-test"

	wantContains(t, kubectl(t, kc, "create", "namespace", ns), "namespace/"+ns+" created")
	wantContains(t, kubectl(t, kc, "-n", ns, "create", "configmap", "cfg", "--from-literal=a=1", "--from-literal=b=2"), "configmap/cfg created")
	wantContains(t, kubectl(t, kc, "-n", ns, "get", "configmap", "cfg", "-o", "yaml"),
		"apiVersion: v1", "kind: ConfigMap", "  a: \"1\"", "  b: \"2\"", "name: cfg", "namespace: "+ns, "uid: ")
	// The namespace also holds kube-root-ca.crt, as every namespace does.
	table := kubectl(t, kc, "-n", ns, "get", "configmaps")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "NAME DATA AGE" || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "cfg 2 ") ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[2]), " "), "kube-root-ca.crt 1 ") {
		t.Errorf("table output:\n%s", table)
	}
	wantContains(t, kubectl(t, kc, "-n", ns, "label", "configmap", "cfg", "env=test"), "configmap/cfg labeled")
	wantContains(t, kubectl(t, kc, "-n", ns, "annotate", "configmap", "cfg", "note=hello"), "configmap/cfg annotated")
	wantContains(t, kubectl(t, kc, "-n", ns, "patch", "configmap", "cfg", "-p", `{"data":{"c":"3"}}`), "configmap/cfg patched")
	wantContains(t, kubectl(t, kc, "-n", ns, "patch", "configmap", "cfg", "--type=json", "-p", `[{"op":"remove","path":"/data/a"}]`), "configmap/cfg patched")
	got := kubectl(t, kc, "-n", ns, "get", "configmap", "cfg", "-o", "jsonpath={.metadata.labels.env} {.metadata.annotations.note} {.data}")
	if got != `test hello {"b":"2","c":"3"}` {
		t.Errorf("after label, annotate, patch: %s", got)
	}
	wantContains(t, kubectl(t, kc, "-n", ns, "get", "cm", "-l", "env=test", "-o", "name"), "configmap/cfg")

	t.Run("watch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kc, "-n", ns, "get", "cm", "-w", "--request-timeout=30s")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); cmd.Wait() }()
		sc := bufio.NewScanner(stdout)
		// The initial list first: the header and cfg.
		for sc.Scan() && !strings.HasPrefix(sc.Text(), "cfg ") {
		}
		kubectl(t, kc, "-n", ns, "create", "configmap", "watched", "--from-literal=x=y")
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "watched ") {
				return
			}
		}
		t.Errorf("kubectl get -w did not show the created configmap (%v)", sc.Err())
	})

	wantContains(t, kubectl(t, kc, "-n", ns, "delete", "configmap", "cfg"), `configmap "cfg" deleted`)
	resources := kubectl(t, kc, "api-resources")
	wantContains(t, resources, "configmaps", "cm", "ConfigMap", "namespaces", "leases", "coordination.k8s.io/v1", "controllerrevisions", "apps/v1")
	wantContains(t, kubectl(t, kc, "api-versions"), "v1\n", "apps/v1\n", "coordination.k8s.io/v1\n")
	wantContains(t, kubectl(t, kc, "get", "namespaces"), "default", "kube-system", ns)
}
