package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miniapiserver/miniapiserver/test/integration/reference"
)

// kubectlStep is one kubectl command of the scenario and, when get is
// set, the object read back after it (with its managed fields).
type kubectlStep struct {
	name string
	args []string
	// manifest is the file given on stdin (-f -), from testdata/kubectl,
	// after replacing each old with new of edits.
	manifest string
	edits    []string
	get      []string
}

// kubectlResult is what a step printed and the object it left, normalised.
type kubectlResult struct {
	Output string `json:"output"`
	Object any    `json:"object,omitempty"`
}

var (
	getWeb  = []string{"get", "deployment", "web", "-o", "json", "--show-managed-fields"}
	getWeb2 = []string{"get", "deployment", "web2", "-o", "json", "--show-managed-fields"}
	getCM   = []string{"get", "configmap", "cm", "-o", "json", "--show-managed-fields"}
)

// kubectlScenario is client-side apply three times (create, change,
// remove fields: the last-applied-configuration annotation and the
// three-way strategic merge), then server-side apply over it (conflicts
// with the client-side manager), a second manager's conflict and
// --force-conflicts, client-side apply over server-side apply, scale,
// and a server-side dry run.
var kubectlScenario = []kubectlStep{
	{name: "client-side-create", args: []string{"apply", "-f", "-"}, manifest: "dep1.yaml", get: getWeb},
	{name: "client-side-change", args: []string{"apply", "-f", "-"}, manifest: "dep2.yaml", get: getWeb},
	{name: "client-side-remove", args: []string{"apply", "-f", "-"}, manifest: "dep3.yaml", get: getWeb},
	{name: "server-side-over-client-side", args: []string{"apply", "--server-side", "-f", "-"}, manifest: "dep1.yaml", get: getWeb},
	{name: "server-side-takes-over", args: []string{"apply", "--server-side", "-f", "-"}, manifest: "dep3.yaml", get: getWeb},
	{name: "second-manager-conflicts", args: []string{"apply", "--server-side", "--field-manager", "other", "-f", "-"},
		manifest: "dep3.yaml", edits: []string{"nginx:1.26", "nginx:1.99", "tier: back", "tier: mid"}},
	{name: "second-manager-forces", args: []string{"apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"},
		manifest: "dep3.yaml", edits: []string{"nginx:1.26", "nginx:1.99", "tier: back", "tier: mid"}, get: getWeb},
	{name: "server-side-create", args: []string{"apply", "--server-side", "-f", "-"}, manifest: "dep2.yaml", edits: []string{"name: web\n", "name: web2\n"}, get: getWeb2},
	{name: "client-side-over-server-side", args: []string{"apply", "-f", "-"}, manifest: "dep3.yaml", edits: []string{"name: web\n", "name: web2\n"}, get: getWeb2},
	{name: "scale", args: []string{"scale", "deployment", "web2", "--replicas", "5"}, get: getWeb2},
	{name: "server-side-dry-run", args: []string{"apply", "--server-side", "--dry-run=server", "-o", "json", "-f", "-"}, manifest: "dep2.yaml",
		edits: []string{"name: web\n", "name: web3\n"}},
	{name: "configmap-dry-run-client", args: []string{"create", "configmap", "cm", "--from-literal=a=1", "--dry-run=client", "-o", "yaml"}},
	{name: "configmap-create", args: []string{"create", "configmap", "cm", "--from-literal=a=1"}, get: getCM},
	{name: "configmap-apply-conflicts-with-create", args: []string{"apply", "--server-side", "-f", "-"}, manifest: "cm.yaml", get: getCM},
	{name: "configmap-client-side-apply", args: []string{"apply", "-f", "-"}, manifest: "cm.yaml", get: getCM},
}

const kubectlFile = "testdata/kubectl.json"

// TestKubectl runs the scenario with the real kubectl and compares what
// it printed and the objects it left (managed fields included) with what
// the same kubectl got from kube-apiserver (testdata/kubectl.json).
func TestKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to run the kubectl apply tests")
	}
	tg := testTarget(t)
	ns := tg.namespace(t, "kubectl-apply")
	n := reference.NewNormalizer(ns)
	var want []kubectlResult
	if !*reference.Record {
		data, err := os.ReadFile(kubectlFile)
		if err != nil {
			t.Fatalf("%v (record it with -record)", err)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
	}
	var got []kubectlResult
	for i, st := range kubectlScenario {
		var stdin []byte
		if st.manifest != "" {
			data, err := os.ReadFile("testdata/kubectl/" + st.manifest)
			if err != nil {
				t.Fatal(err)
			}
			for j := 0; j+1 < len(st.edits); j += 2 {
				data = bytes.ReplaceAll(data, []byte(st.edits[j]), []byte(st.edits[j+1]))
			}
			stdin = data
		}
		res := kubectlResult{Output: kubectlText(n, runKubectl(t, tg, ns, stdin, st.args...))}
		if st.get != nil {
			var obj any
			out := runKubectl(t, tg, ns, nil, st.get...)
			if err := json.Unmarshal([]byte(strings.ReplaceAll(out, ns, "NS")), &obj); err != nil {
				t.Fatalf("%s: %v\n%s", st.name, err, out)
			}
			res.Object = n.Value("", obj)
		}
		got = append(got, res)
		if *reference.Record {
			continue
		}
		if i >= len(want) {
			t.Fatalf("step %s was not recorded (run with -record)", st.name)
		}
		if g := reference.RoundTrip(t, res); !reflect.DeepEqual(g, want[i]) {
			t.Errorf("step %d %s differs from kube's:\n got %s\nwant %s", i, st.name, reference.MustJSON(t, g), reference.MustJSON(t, want[i]))
		}
	}
	if *reference.Record {
		data, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(kubectlFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runKubectl runs kubectl in namespace ns against tg and returns what it
// printed (stdout then stderr); a failing command is part of the
// scenario (conflicts), not of the test.
func runKubectl(t *testing.T, tg *target, ns string, stdin []byte, args ...string) string {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all := append(append(append([]string{}, tg.Kubectl...), "-n", ns), args...)
	cmd := exec.CommandContext(c, "kubectl", all...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if c.Err() != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), c.Err())
	}
	out := stdout.String() + stderr.String()
	if err != nil {
		out += "(exit: " + err.Error() + ")\n"
	}
	return out
}

// klogLine is a log line of kubectl's (its time and pid differ).
var klogLine = regexp.MustCompile(`(?m)^[IWE]\d{4} .*\n`)

// text normalises kubectl's output; JSON output is normalised as a value.
func kubectlText(n *reference.Normalizer, s string) string {
	s = klogLine.ReplaceAllString(n.Namespace(s), "")
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		data, _ := json.MarshalIndent(n.Value("", v), "", " ")
		return string(data)
	}
	return s
}
