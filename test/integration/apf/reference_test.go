package apf

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// startReference runs kube-apiserver (and its etcd) with the flow control
// flags of cfg, by $REFERENCE_KUBE/start-kube.sh with the binaries of
// $PEER_BIN, and stops it when the benchmark ends. It returns the
// administrator's configuration (the script's static token, system:masters).
func startReference(b testing.TB, cfg floodConfig) *rest.Config {
	ref := envOr("REFERENCE_KUBE", "/work/shared/reference-kube")
	bin := envOr("PEER_BIN", "/tmp/peer/bin")
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		b.Fatalf("APF_BENCH_REFERENCE needs the reference kube-apiserver in $PEER_BIN (%v); build it with %s/build.sh", err, ref)
	}
	args := fmt.Sprintf("--enable-priority-and-fairness=%v", cfg.apf)
	if cfg.seats[0] > 0 {
		args += fmt.Sprintf(" --max-requests-inflight=%d --max-mutating-requests-inflight=%d", cfg.seats[0], cfg.seats[1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := exec.CommandContext(ctx, filepath.Join(ref, "start-kube.sh"))
	start.Env = append(os.Environ(), "PEER_STATE="+b.TempDir(), "PEER_BIN="+bin, "KUBE_EXTRA_ARGS="+args)
	var stderr bytes.Buffer
	start.Stderr = &stderr
	out, err := start.Output()
	exports := parseExports(out)
	if pid := exports["PEER_PID"] + exports["ETCD_PID"]; pid != "" {
		b.Cleanup(func() {
			stop := exec.Command(filepath.Join(ref, "stop.sh"))
			stop.Env = append(os.Environ(), "PEER_STATE="+exports["PEER_STATE"],
				"PEER_PID="+exports["PEER_PID"], "ETCD_PID="+exports["ETCD_PID"])
			if out, err := stop.CombinedOutput(); err != nil {
				b.Errorf("stop.sh: %v\n%s", err, out)
			}
		})
	}
	if err != nil || exports["PEER_URL"] == "" {
		b.Fatalf("start-kube.sh: %v\n%s", err, stderr.String())
	}
	return &rest.Config{
		Host:            exports["PEER_URL"],
		BearerToken:     exports["PEER_TOKEN"],
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, // the reference on loopback, self-signed
	}
}

// parseExports reads start-kube.sh's "export NAME=value" lines.
func parseExports(out []byte) map[string]string {
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			exports[name] = value
		}
	}
	return exports
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
