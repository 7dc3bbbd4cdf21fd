package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestKwokctl runs hack/kwokctl.sh: kwok's `kwokctl create cluster
// --runtime binary` (v0.8.0, built from the module proxy) with
// miniapiserver as its kube-apiserver and etcd, twice (kwokctl's default
// flags, then --kube-admission=false, --kube-runtime-config,
// --kube-feature-gates, --disable-qps-limits, -v), each time checking that
// a simulated node goes Ready and a Deployment's pods Running and Ready.
// It builds what it lacks (kwokctl, kwok, kube-controller-manager,
// kube-scheduler, cached in $E2E_BIN), so it runs only when asked:
//
//	KWOKCTL=1 go test -run TestKwokctl ./test/e2e   # or hack/kwokctl.sh
func TestKwokctl(t *testing.T) {
	if os.Getenv("KWOKCTL") != "1" {
		t.Skip("KWOKCTL is not 1: run hack/kwokctl.sh, or KWOKCTL=1 go test -run TestKwokctl")
	}
	if _, err := exec.LookPath("kubectl"); err != nil && os.Getenv("KUBECTL") == "" {
		t.Skip("no kubectl on PATH and KUBECTL is not set")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "kwokctl.sh"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, script).CombinedOutput()
	if err != nil {
		t.Fatalf("hack/kwokctl.sh: %v\n%s", err, out)
	}
	t.Logf("hack/kwokctl.sh passed in %v", time.Since(start).Round(time.Second))
}
