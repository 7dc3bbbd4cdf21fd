// Command report reads the Ginkgo JSON report of an e2e.test run
// (--ginkgo.json-report) and prints each test's result, then compares the
// run with the list of the tests that pass on kube-apiserver in the same
// harness (hack/conformance-reference-pass.txt): a listed test that the
// run should have run (it matches -focus and not -skip, the regular
// expressions given to e2e.test) but did not pass is a regression, and
// the command exits 1. With -record it writes that list instead: the
// tests of the run's scope that passed replace the list's lines in that
// scope; lines outside it are kept.
//
//	go run ./report -json report.json -list ../conformance-reference-pass.txt -focus RE -skip RE [-record]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	jsonReport := flag.String("json", "", "the Ginkgo JSON report of the run")
	list := flag.String("list", "", "the reference pass list")
	focus := flag.String("focus", "", "the run's --ginkgo.focus")
	skip := flag.String("skip", "", "the run's --ginkgo.skip")
	record := flag.Bool("record", false, "write the run's passes into -list instead of comparing")
	server := flag.String("server", "", "the server's name, for the messages")
	flag.Parse()
	if err := run(*jsonReport, *list, *focus, *skip, *server, *record); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// result is one test of the run.
type result struct {
	name, state, message string
	runTime              time.Duration
}

func run(jsonReport, list, focus, skip, server string, record bool) error {
	results, err := readResults(jsonReport)
	if err != nil {
		return err
	}
	inScope, err := scope(focus, skip)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	passed := map[string]bool{}
	for _, r := range results {
		counts[r.state]++
		if r.state == "passed" {
			passed[r.name] = true
		}
		if r.state == "skipped" {
			continue
		}
		fmt.Printf("%-8s %6.1fs  %s\n", strings.ToUpper(r.state), r.runTime.Seconds(), r.name)
		if r.state != "passed" {
			fmt.Printf("         %s\n", strings.ReplaceAll(firstLines(r.message, 6), "\n", "\n         "))
		}
	}
	failed := len(results) - counts["passed"] - counts["skipped"] - counts["pending"]
	fmt.Printf("conformance on %s: %d passed, %d failed, %d skipped\n", server, counts["passed"], failed, counts["skipped"])

	lines, err := readList(list)
	if err != nil && !(record && os.IsNotExist(err)) {
		return err
	}
	if record {
		var keep []string
		for _, l := range lines {
			if !inScope(l) {
				keep = append(keep, l)
			}
		}
		for name := range passed {
			keep = append(keep, name)
		}
		slices.Sort(keep)
		keep = slices.Compact(keep)
		return writeList(list, keep, server)
	}

	var regressions []string
	expected := 0
	for _, name := range lines {
		if !inScope(name) {
			continue
		}
		expected++
		if !passed[name] {
			regressions = append(regressions, name)
		}
	}
	if len(regressions) > 0 {
		fmt.Printf("%d of the %d tests of this run that pass on kube-apiserver (%s) did not pass on %s:\n", len(regressions), expected, list, server)
		for _, name := range regressions {
			fmt.Printf("  %s (%s)\n", name, stateOf(results, name))
		}
		os.Exit(1)
	}
	fmt.Printf("all %d tests of this run that pass on kube-apiserver (%s) passed on %s\n", expected, list, server)
	return nil
}

// readResults reads the specs (It nodes) of a Ginkgo JSON report.
func readResults(file string) ([]result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var results []result
	for _, rep := range reports {
		for _, s := range rep.SpecReports {
			if s.LeafNodeType != types.NodeTypeIt {
				continue // suite setup and teardown
			}
			results = append(results, result{name: s.FullText(), state: s.State.String(), message: s.Failure.Message, runTime: s.RunTime})
		}
	}
	slices.SortFunc(results, func(a, b result) int { return strings.Compare(a.name, b.name) })
	return results, nil
}

// scope returns whether a test name is one the run should have run.
func scope(focus, skip string) (func(string) bool, error) {
	f, err := regexp.Compile(focus)
	if err != nil {
		return nil, fmt.Errorf("-focus: %w", err)
	}
	var s *regexp.Regexp
	if skip != "" {
		if s, err = regexp.Compile(skip); err != nil {
			return nil, fmt.Errorf("-skip: %w", err)
		}
	}
	return func(name string) bool { return f.MatchString(name) && (s == nil || !s.MatchString(name)) }, nil
}

// readList reads the test names of a pass list: one a line, # comments.
func readList(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if l := strings.TrimSpace(s.Text()); l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, l)
		}
	}
	return names, s.Err()
}

func writeList(file string, names []string, server string) error {
	var b strings.Builder
	b.WriteString("# The [Conformance] tests that pass on kube-apiserver v1.37.2 in hack/conformance.sh's\n")
	b.WriteString("# harness (kube-controller-manager, kube-scheduler, kwok's nodes; no container runtime),\n")
	b.WriteString("# recorded by `hack/conformance.sh -reference -record [SIG]` (last from " + server + ").\n")
	b.WriteString("# hack/conformance.sh fails when one of them, in the run's scope, does not pass on miniapiserver.\n")
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

func stateOf(results []result, name string) string {
	for _, r := range results {
		if r.name == name {
			return r.state
		}
	}
	return "not run"
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
