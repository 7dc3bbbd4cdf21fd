package authz

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeScheduler is the kube-scheduler v1.37.2 binary the delegated
// authorization test runs ($KUBE_SCHEDULER, else the reference build's).
func kubeScheduler(t *testing.T) string {
	path := os.Getenv("KUBE_SCHEDULER")
	if path == "" {
		path = "/tmp/peer/bin/kube-scheduler"
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no kube-scheduler binary at %s (set KUBE_SCHEDULER; /work/shared/reference-kube/build.sh builds one): %v", path, err)
	}
	return path
}

// TestDelegatedAuthorization: kube-scheduler, pointed at this server with
// --authorization-kubeconfig, decides who may read its /metrics by
// SubjectAccessReviews to this server: refused, then allowed once a
// ClusterRoleBinding grants the path.
func TestDelegatedAuthorization(t *testing.T) {
	t.Parallel()
	bin := kubeScheduler(t)
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: mini, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: mini, context: {cluster: mini, user: admin}}]
current-context: mini
`, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig, "--leader-elect=false", "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port))
	logFile, err := os.Create(filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(path string) (int, string, error) {
		resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), nil
	}
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if _, _, err := get("/healthz"); err == nil {
			break
		} else if time.Since(start) > time.Minute {
			t.Fatalf("kube-scheduler not serving after a minute: %v", err)
		}
	}
	code, body, err := get("/metrics")
	if err != nil || code != http.StatusForbidden || !strings.Contains(body, `forbidden: User \"system:anonymous\" cannot get path \"/metrics\"`) {
		t.Fatalf("anonymous /metrics before a grant: %d %s %v", code, body, err)
	}
	name := namespace(t) + "-metrics"
	rbac := admin(t).RbacV1()
	ctxBg := context.Background()
	if _, err := rbac.ClusterRoles().Create(ctxBg, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctxBg, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef: ref("ClusterRole", name), Subjects: []rbacv1.Subject{user("system:anonymous")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(ctxBg, name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(ctxBg, name, metav1.DeleteOptions{})
	})
	// kube-scheduler caches decisions (10 s for refusals): wait them out.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, err = get("/metrics")
		if err == nil && code == http.StatusOK && strings.Contains(body, "scheduler_") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("anonymous /metrics after the grant: %d %.200s %v", code, body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
