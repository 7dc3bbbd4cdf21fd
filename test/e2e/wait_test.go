package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// eventually polls check every half second until it reports done, for at
// most timeout. If it never does, t fails with what was awaited, what
// check saw last, and the components' last log lines about namespace ns
// (all namespaces when "") and their last errors.
func (c *cluster) eventually(t *testing.T, timeout time.Duration, what, ns string, check func() (seen string, done bool, err error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var seen string
	for {
		s, done, err := check()
		if done && err == nil {
			return
		}
		if seen = s; err != nil {
			seen = fmt.Sprintf("%s (error: %v)", s, err)
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended while waiting for %s; last seen: %s", what, seen)
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatalf("waited %v for %s\nlast seen: %s\n%s", timeout, what, seen, c.diagnostics(ns))
}

// klogProblem matches a klog line at error or warning level, or a slog
// line at ERROR or WARN.
var klogProblem = regexp.MustCompile(`^[EW]\d{4} |level=(ERROR|WARN)`)

// diagnostics returns, for each component and the API server: whether it
// has exited, its last log lines that mention ns, and its last error and
// warning lines.
func (c *cluster) diagnostics(ns string) string {
	var b strings.Builder
	procs := append([]*process{}, c.components...)
	server := c.server.proc
	if server == nil { // the reference: started by start-kube.sh
		server = &process{name: c.server.name, log: c.server.log}
	}
	procs = append(procs, server)
	for _, p := range procs {
		if p.done != nil {
			if ended, how := p.exited(); ended {
				fmt.Fprintf(&b, "--- %s has EXITED (%s)\n", p.name, how)
			}
		}
		if ns != "" {
			about := p.grep(func(l string) bool { return strings.Contains(l, ns) })
			fmt.Fprintf(&b, "--- %s, last lines about %s (%s):\n%s\n", p.name, ns, p.log, last(about, 12))
		}
		problems := distinct(p.grep(klogProblem.MatchString))
		fmt.Fprintf(&b, "--- %s, last errors and warnings (%s):\n%s\n", p.name, p.log, last(problems, 8))
	}
	return b.String()
}

// last returns the last n lines, one per line.
func last(lines []string, n int) string {
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// distinct returns the lines whose messages (what follows a klog header)
// have not come before: the same failure repeats at every retry.
func distinct(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, line := range lines {
		msg := line
		if _, m, ok := strings.Cut(line, "] "); ok {
			msg = m
		}
		if !seen[msg] {
			seen[msg] = true
			out = append(out, line)
		}
	}
	return out
}
