package kubectl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// step is one kubectl command of a scenario. In its arguments, manifest
// and editor script, {ns} stands for the test's namespace.
type step struct {
	name string
	args []string
	// manifest is given on stdin: a file of testdata/manifests.
	manifest string
	// editor is the body of a shell script kubectl edit runs as $EDITOR
	// on the file to edit ($1).
	editor string
}

// recorded is what a step printed, normalised.
type recorded struct {
	Step   string `json:"step"`
	Output string `json:"output"`
}

// runScenario runs the steps in a namespace of their own and compares
// what each printed with what kubectl printed against kube-apiserver
// (testdata/<file>.json), or records that with -record.
func runScenario(t *testing.T, file string, steps []step) {
	t.Helper()
	tg := testTarget(t)
	ns := tg.namespace(t, "kubectl-"+file)
	golden := filepath.Join("testdata", file+".json")
	want := map[string]string{}
	if !*record {
		for _, r := range readGolden(t, golden) {
			want[r.Step] = r.Output
		}
	}
	var got []recorded
	for _, st := range steps {
		out := normalize(tg.run(t, st.invocation(t, tg, ns)), ns)
		got = append(got, recorded{Step: st.name, Output: out})
		if *record {
			continue
		}
		w, ok := want[st.name]
		if !ok {
			t.Errorf("step %s was not recorded (run with -record)", st.name)
			continue
		}
		if out != w {
			t.Errorf("step %s (kubectl %s) differs from kube's:\n--- got\n%s--- want\n%s", st.name, strings.Join(st.args, " "), out, w)
		}
	}
	if *record {
		writeGolden(t, golden, got)
	}
}

// uidRef is a reference in a manifest to the UID of an object of the
// namespace: {uid:deployment/web}.
var uidRef = regexp.MustCompile(`\{uid:([a-z.]+/[a-z0-9.-]+)\}`)

// invocation is the kubectl run of a step in namespace ns of tg.
func (st step) invocation(t *testing.T, tg *target, ns string) invocation {
	t.Helper()
	inv := invocation{}
	for _, a := range st.args {
		inv.args = append(inv.args, strings.ReplaceAll(a, "{ns}", ns))
	}
	if st.manifest != "" {
		data, err := os.ReadFile(filepath.Join("testdata", "manifests", st.manifest))
		if err != nil {
			t.Fatal(err)
		}
		inv.stdin = uidRef.ReplaceAllStringFunc(strings.ReplaceAll(string(data), "{ns}", ns), func(ref string) string {
			obj := uidRef.FindStringSubmatch(ref)[1]
			return tg.run(t, invocation{args: []string{"-n", ns, "get", obj, "-o", "jsonpath={.metadata.uid}"}})
		})
	}
	if st.editor != "" {
		script := filepath.Join(t.TempDir(), "editor.sh")
		body := "#!/bin/sh\nset -e\n" + strings.ReplaceAll(st.editor, "{ns}", ns) + "\n"
		if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		inv.env = append(inv.env, "EDITOR="+script)
	}
	return inv
}

func writeGolden(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The parts of kubectl's output that differ from one run (or one server)
// to the next, and what they become.
var normalizers = []struct {
	re   *regexp.Regexp
	repl string
}{
	// klog's header (level, time, pid, file:line).
	{regexp.MustCompile(`(?m)^([IWE])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] `), "$1] "},
	// client-go's log of a watch that kubectl's own --timeout cancelled
	// while it was being set up: whether it comes depends on how long the
	// LIST before it took (a loaded machine), on either server.
	{regexp.MustCompile(`(?m)^E\] "Unhandled Error" err="k8s.io/client-go/tools/watch/informerwatcher.go:\d+: Failed to watch [^"]*: context deadline exceeded"\n`), ""},
	// The same cancelled watch, when it had begun: client-go calls a watch
	// that ends within a second with no event "very short".
	{regexp.MustCompile(`(?m)^[EW]\] [^\n]*very short watch: [^\n]*\n`), ""},
	{regexp.MustCompile(`https://127\.0\.0\.1:\d+`), "https://SERVER"},
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	// describe's times; diff's file times.
	{regexp.MustCompile(`[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d [+-]\d{4}`), "TIME"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ [+-]\d{4}`), "TIME"},
	{regexp.MustCompile(`(resourceVersion"?: *"?|Resource Version: *)\d+`), "${1}RV"},
	// Cluster IPs (kube's range is 10.96.0.0/16, this server's 10.0.0.0/24).
	{regexp.MustCompile(`\b10\.\d+\.\d+\.\d+\b`), "IP"},
	{regexp.MustCompile(`(nodePort"?: *)\d+`), "${1}NODEPORT"},
	{regexp.MustCompile(`:3\d{4}/(TCP|UDP)`), ":NODEPORT/$1"},
	{regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`), "kube-api-access-XXXXX"},
	{regexp.MustCompile(`/tmp/(LIVE|MERGED)-\d+`), "/tmp/$1"},
	// Ages: 5s, 3m2s, 2y333d... (not quantities such as 100m).
	{regexp.MustCompile(`(?m)(?P<before>^|\s)(\d+s|\d\d?m|\d+m\d+s|\d+h(\d+m)?|\d+d(\d+h)?|\d+y(\d+d)?)(?P<after>\s|$)`), "${before}AGE${after}"},
	// Columns are aligned on the width of what the normalisers replaced:
	// runs of spaces after a word become two.
	{regexp.MustCompile(`(\S)  +`), "$1  "},
	{regexp.MustCompile(`(?m) +$`), ""},
}

// normalize makes kubectl's output comparable between runs and servers.
func normalize(s, ns string) string {
	s = strings.ReplaceAll(s, ns, "NS")
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.repl)
	}
	return s
}
