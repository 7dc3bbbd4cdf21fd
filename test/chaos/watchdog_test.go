package chaos

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

var watchdogAfter = flag.Duration("chaos.watchdog", 14*time.Minute,
	"When the package's tests are declared hung (0: never). Before go test's own -timeout (20m in hack/test.sh), so that what is printed last, which is what a CI log's tail shows, says where they hang.")

// replicaLogs are the log files of every replica started, for the
// watchdog.
var replicaLogs struct {
	mu    sync.Mutex
	paths []string
}

func recordReplicaLog(path string) {
	replicaLogs.mu.Lock()
	defer replicaLogs.mu.Unlock()
	replicaLogs.paths = append(replicaLogs.paths, path)
}

// startWatchdog ends the test binary after d, printing the last lines of
// the replicas' logs and then the goroutines of this module's test code
// (the whole dump of go test's -timeout is too long for a log's tail, and
// its first lines, which name the test, are the ones cut).
func startWatchdog(d time.Duration, cleanup func()) (stop func() bool) {
	if d <= 0 {
		return func() bool { return true }
	}
	t := time.AfterFunc(d, func() {
		w := os.Stderr
		fmt.Fprintf(w, "\nchaos watchdog: the tests still run after %v\n", d)
		printReplicaLogs(w)
		fmt.Fprintln(w, "chaos watchdog: goroutines in the tests' code:")
		buf := make([]byte, 64<<20)
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "miniapiserver/test/") && !strings.Contains(g, "startWatchdog") {
				fmt.Fprintf(w, "%s\n\n", g)
			}
		}
		cleanup()
		os.Exit(1)
	})
	return t.Stop
}

func printReplicaLogs(w io.Writer) {
	replicaLogs.mu.Lock()
	defer replicaLogs.mu.Unlock()
	for _, p := range replicaLogs.paths {
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			continue
		}
		fmt.Fprintf(w, "chaos watchdog: %s:\n%s\n", p, tail(string(data), 15))
	}
}
