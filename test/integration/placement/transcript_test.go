package placement

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// step is one request of a transcript. NS in the path and body is the
// test's namespace, which also names its cluster-scoped objects.
type step struct {
	name        string
	method      string
	path        string
	contentType string
	accept      string
	body        string
}

// answer is what a server answered a step, normalised.
type answer struct {
	Code     int      `json:"code"`
	Body     any      `json:"body"`
	Warnings []string `json:"warnings,omitempty"`
}

const (
	jsonBody   = "application/json"
	mergePatch = "application/merge-patch+json"
	applyYAML  = "application/apply-patch+yaml"
	asTable    = "application/json;as=Table;v=v1;g=meta.k8s.io"
)

func create(name, path, body string) step {
	return step{name: name, method: "POST", path: path, contentType: jsonBody, body: body}
}

func put(name, path, body string) step {
	return step{name: name, method: "PUT", path: path, contentType: jsonBody, body: body}
}

func patch(name, path, body string) step {
	return step{name: name, method: "PATCH", path: path, contentType: mergePatch, body: body}
}

func get(name, path string) step { return step{name: name, method: "GET", path: path} }

func table(name, path string) step {
	return step{name: name, method: "GET", path: path, accept: asTable}
}

func del(name, path string) step { return step{name: name, method: "DELETE", path: path} }

// transcripts are replayed in order, each in a namespace of its own: a
// step sees what the earlier ones wrote. The files of each group add
// theirs in init.
var transcripts = map[string][]step{}

const transcriptFile = "testdata/transcript.json"

// TestTranscript replays the transcripts against the server and compares
// every answer (code, whole body, warnings) with kube-apiserver's. With
// -record it writes kube's answers instead.
func TestTranscript(t *testing.T) {
	tg := testTarget(t)
	want := map[string][]answer{}
	if !*record {
		data, err := os.ReadFile(transcriptFile)
		if err != nil {
			t.Fatalf("%v (record it with -record)", err)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]answer{}
	names := make([]string, 0, len(transcripts))
	for name := range transcripts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ns := tg.namespace(t)
			n := &normalizer{ns: ns, rvs: map[string]string{}}
			for i, st := range transcripts[name] {
				r := tg.do(t, st.method, strings.ReplaceAll(st.path, "NS", ns), st.contentType, st.accept, strings.ReplaceAll(st.body, "NS", ns))
				a := n.answer(r)
				got[name] = append(got[name], a)
				if *record {
					continue
				}
				if i >= len(want[name]) {
					t.Fatalf("step %s was not recorded (run with -record)", st.name)
				}
				if w := want[name][i]; !reflect.DeepEqual(roundTrip(t, a), w) {
					t.Errorf("step %d %s differs from kube's:\n got %s\nwant %s", i, st.name, mustJSON(t, a), mustJSON(t, w))
				}
			}
		})
	}
	if *record {
		data, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(transcriptFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// normalizer hides what differs between servers and runs: times, ages,
// UIDs, the namespace's name; resourceVersions become rv1, rv2... in the
// order they first appear, so that equal ones stay equal.
type normalizer struct {
	ns  string
	rvs map[string]string
}

var (
	timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	age       = regexp.MustCompile(`^(\d+[smhdy])+$`)
	uid       = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func (n *normalizer) answer(r response) answer {
	a := answer{Code: r.code}
	body := strings.ReplaceAll(string(r.body), n.ns, "NS")
	if err := json.Unmarshal([]byte(body), &a.Body); err != nil {
		a.Body = body
	}
	// A list's resourceVersion is the store's latest revision: it counts
	// whatever else the server wrote meanwhile (this one creates a
	// namespace's service account and CA config map, the reference does
	// not).
	if m, ok := a.Body.(map[string]any); ok && (m["kind"] == "Table" || strings.HasSuffix(fmt.Sprint(m["kind"]), "List")) {
		if meta, ok := m["metadata"].(map[string]any); ok && meta["resourceVersion"] != nil {
			meta["resourceVersion"] = "<list>"
		}
	}
	a.Body = n.value("", a.Body)
	for _, w := range r.warnings {
		a.Warnings = append(a.Warnings, strings.ReplaceAll(w, n.ns, "NS"))
	}
	return a
}

func (n *normalizer) value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = n.value(k, x)
		}
		if entries, ok := v["managedFields"].([]any); ok {
			sortManagedFields(entries)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = n.value("", x)
		}
		return v
	case string:
		switch {
		case key == "resourceVersion" && v != "":
			if _, ok := n.rvs[v]; !ok {
				n.rvs[v] = fmt.Sprintf("rv%d", len(n.rvs)+1)
			}
			return n.rvs[v]
		case uid.MatchString(v):
			return "<uid>"
		case timestamp.MatchString(v):
			return "<time>"
		case age.MatchString(v):
			return "<age>"
		}
	}
	return v
}

// sortManagedFields orders managed fields entries without their times:
// servers order them by time to the second, which two runs cross at
// different writes.
func sortManagedFields(entries []any) {
	key := func(e any) string {
		m, _ := e.(map[string]any)
		return fmt.Sprint(m["operation"], "\x00", m["manager"], "\x00", m["subresource"], "\x00", m["apiVersion"])
	}
	sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// roundTrip gives a the types JSON decoding gives (as the recorded
// answers have).
func roundTrip(t *testing.T, a answer) answer {
	t.Helper()
	var out answer
	if err := json.Unmarshal([]byte(mustJSON(t, a)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
