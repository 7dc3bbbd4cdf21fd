package envtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestSetupEnvtestSideload: the tarball of `envtest-assets --tarball` is
// one setup-envtest (the module's tool) sideloads as a Kubernetes
// version, and the binaries it installs run an envtest environment.
func TestSetupEnvtestSideload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tarball, store := filepath.Join(dir, "envtest.tar.gz"), filepath.Join(dir, "store")
	if out, err := exec.Command(server, "envtest-assets", "--tarball", tarball).CombinedOutput(); err != nil {
		t.Fatalf("envtest-assets --tarball: %v\n%s", err, out)
	}
	in, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	sideload := exec.Command("go", "tool", "setup-envtest", "sideload", "1.37.2", "--bin-dir", store)
	sideload.Stdin = in
	if out, err := sideload.CombinedOutput(); err != nil {
		t.Fatalf("setup-envtest sideload: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	use := exec.Command("go", "tool", "setup-envtest", "use", "-i", "1.37.2", "--bin-dir", store, "-p", "path")
	use.Stdout, use.Stderr = &stdout, &stderr
	if err := use.Run(); err != nil {
		t.Fatalf("setup-envtest use: %v\n%s", err, stderr.String())
	}
	assets := strings.TrimSpace(stdout.String())

	// KUBEBUILDER_ASSETS (set by TestMain) would win over
	// BinaryAssetsDirectory: the paths are given one by one.
	e := &envtest.Environment{Scheme: scheme, ControlPlane: envtest.ControlPlane{
		APIServer: &envtest.APIServer{Path: filepath.Join(assets, "kube-apiserver")},
		Etcd:      &envtest.Etcd{Path: filepath.Join(assets, "etcd")},
	}}
	c, err := e.Start()
	if err != nil {
		t.Fatalf("envtest with the sideloaded binaries (%s): %v", assets, err)
	}
	defer func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cl := mustClient(t, c)
	if err := cl.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sideloaded"}}); err != nil {
		t.Error(err)
	}
}
