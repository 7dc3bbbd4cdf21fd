package chaos

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var duration = flag.Duration("chaos.duration", 0,
	"How long the fault schedule of TestChaos repeats (0: once; hack/chaos.sh sets it).")

// binary is the miniapiserver binary the replicas run, built by TestMain.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "miniapiserver-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "miniapiserver")
	// Built without -race: the replicas are the system under test, the
	// race detector runs on the test binary's clients and etcd members.
	build := exec.Command("go", "build", "-o", binary, "github.com/miniapiserver/miniapiserver/cmd/miniapiserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building miniapiserver:", err)
		return 1
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "built miniapiserver in %v\n", time.Since(start).Round(time.Millisecond))
	}
	defer startWatchdog(*watchdogAfter, func() { os.RemoveAll(dir) })()
	return m.Run()
}
