// Package aggregator tests the aggregation layer with a real extension
// API server: kube's k8s.io/sample-apiserver (the wardle.example.com
// group: flunders and fischers), built from the Go module proxy at the
// version this module pins, run as a process against miniapiserver
// (delegated authentication and authorization, its own data in the
// embedded etcd of miniapiserver, under a prefix of its own).
//
// It is a module of its own so that the main module never requires
// kube's server libraries. hack/aggregator.sh runs it.
package aggregator

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Binaries the test runs, set by TestMain.
var miniapiserverBin, sampleAPIServerBin string

// TestMain builds miniapiserver (or takes $MINIAPISERVER) and
// sample-apiserver (or reuses the one cached in $SAMPLE_APISERVER_BIN,
// default $XDG_CACHE_HOME/miniapiserver-aggregator/<version>, a folder CI
// can keep: its build takes about two minutes with a cold build cache).
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "aggregator-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if miniapiserverBin = os.Getenv("MINIAPISERVER"); miniapiserverBin == "" {
		miniapiserverBin = filepath.Join(tmp, "miniapiserver")
		if err := build(filepath.Join("..", ".."), miniapiserverBin, "./cmd/miniapiserver"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if sampleAPIServerBin, err = sampleAPIServer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// sampleAPIServer returns the cached sample-apiserver, building it first
// when the cache has none of this version.
func sampleAPIServer() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "k8s.io/sample-apiserver").Output()
	if err != nil {
		return "", fmt.Errorf("finding the version of k8s.io/sample-apiserver: %w", err)
	}
	version := strings.TrimSpace(string(out))
	dir := os.Getenv("SAMPLE_APISERVER_BIN")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "miniapiserver-aggregator", version)
	}
	bin := filepath.Join(dir, "sample-apiserver")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Into a temporary name first: an interrupted build never looks cached.
	if err := build(".", bin+".partial", "k8s.io/sample-apiserver"); err != nil {
		return "", err
	}
	return bin, os.Rename(bin+".partial", bin)
}

func build(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
