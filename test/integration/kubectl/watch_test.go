package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// watchCase is a kubectl watch, the steps run once it watches, and the
// number of lines it prints for them.
type watchCase struct {
	name    string
	args    []string
	actions []step
	lines   int
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWatch runs kubectl get -w (tables, names, JSONPath, with and
// without the initial list, with event types) while objects are created,
// changed and deleted, and compares what it printed with kube's.
func TestWatch(t *testing.T) {
	needKubectl(t)
	create := step{name: "create", args: inNS("create", "configmap", "w2", "--from-literal=k=v")}
	label := step{name: "label", args: inNS("label", "configmap", "w2", "app=watch")}
	change := step{name: "change", args: inNS("patch", "configmap", "w1", "-p", `{"data":{"k":"changed"}}`)}
	remove := step{name: "delete", args: inNS("delete", "configmap", "w2")}
	cases := []watchCase{
		{name: "table", args: inNS("get", "configmaps", "-l", "app=watch", "-w"), actions: []step{create, label, change, remove}, lines: 5},
		{name: "watch only names", args: inNS("get", "configmaps", "-l", "app=watch", "--watch-only", "-o", "name"), actions: []step{create, label, change, remove}, lines: 3},
		{name: "events", args: inNS("get", "configmaps", "-w", "--output-watch-events", "--field-selector=metadata.name!=kube-root-ca.crt"), actions: []step{create, label, change, remove}, lines: 14},
		{name: "jsonpath", args: inNS("get", "configmap", "w1", "-w", "-o", `jsonpath={.metadata.name} {.data}{"\n"}`), actions: []step{change}, lines: 2},
		{name: "json events", args: inNS("get", "configmaps", "--watch-only", "--output-watch-events", "-o", "json", "-l", "app=watch"), actions: []step{change}, lines: 1},
		{name: "deployment scaled", args: inNS("get", "deployments", "-w"), actions: []step{
			{name: "scale", args: inNS("scale", "deployment", "web", "--replicas=3")},
		}, lines: 3},
		{name: "pod terminating", args: inNS("get", "pods", "-w", "--output-watch-events"), actions: []step{
			{name: "delete", args: inNS("delete", "pod", "scheduled", "--wait=false")},
			{name: "delete now", args: inNS("delete", "pod", "scheduled", "--grace-period=0", "--force")},
		}, lines: 6},
	}
	tg := testTarget(t)
	golden := filepath.Join("testdata", "watch.json")
	want := map[string]string{}
	if !*record {
		for _, r := range readGolden(t, golden) {
			want[r.Step] = r.Output
		}
	}
	var got []recorded
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := tg.namespace(t, "kubectl-watch")
			tg.run(t, invocation{args: []string{"-n", ns, "create", "configmap", "w1", "--from-literal=k=v"}})
			tg.run(t, invocation{args: []string{"-n", ns, "label", "configmap", "w1", "app=watch"}})
			tg.run(t, step{args: inNS("create", "-f", "-"), manifest: "multi.yaml"}.invocation(t, tg, ns))
			tg.run(t, step{args: inNS("create", "-f", "-"), manifest: "deletable.yaml"}.invocation(t, tg, ns))
			out := normalize(tg.watch(t, ns, tc), ns)
			got = append(got, recorded{Step: tc.name, Output: out})
			if !*record && out != want[tc.name] {
				t.Errorf("kubectl %s printed:\n%s\nkube's:\n%s", strings.Join(tc.args, " "), out, want[tc.name])
			}
		})
	}
	if *record {
		writeGolden(t, golden, got)
	}
}

// watch starts the kubectl watch of tc, runs its actions once kubectl
// watches, and returns what kubectl printed on its standard output when
// it has printed tc.lines lines (or after 30s).
func (tg *target) watch(t *testing.T, ns string, tc watchCase) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// At -v=6 kubectl logs each response it gets: the watch's tells that
	// it is watching.
	inv := step{args: append(tc.args, "-v=6")}.invocation(t, tg, ns)
	cmd := tg.command(c, inv)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		cmd.Wait() //nolint:errcheck // killed
	}()
	waitOutput(t, c, "kubectl to watch", func() bool { return strings.Contains(stderr.String(), "watch=true") })
	for _, a := range tc.actions {
		tg.run(t, a.invocation(t, tg, ns))
	}
	waitOutput(t, c, "kubectl's output", func() bool { return strings.Count(stdout.String(), "\n") >= tc.lines })
	return stdout.String()
}

// waitOutput polls cond until it holds or c ends.
func waitOutput(t *testing.T, c context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-c.Done():
			t.Fatalf("waiting for %s: %v", what, c.Err())
		case <-tick.C:
		}
	}
}

func readGolden(t *testing.T, path string) []recorded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -record)", err)
	}
	var list []recorded
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	return list
}
