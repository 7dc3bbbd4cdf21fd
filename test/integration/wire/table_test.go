package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

const acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io"

var (
	fixturesOnce sync.Once
	fixturesNS   string
	fixtureNames map[string]string
)

// tableFixtures creates one object of every fixture resource, once, in a
// namespace of its own, and returns the namespace and the objects' names.
func tableFixtures(t *testing.T) (string, map[string]string) {
	t.Helper()
	fixturesOnce.Do(func() {
		ns := namespace(t)
		names := map[string]string{}
		for _, res := range fixtureResources(t) {
			names[res] = createFixture(t, ns, res).GetName()
		}
		fixturesNS, fixtureNames = ns, names
	})
	if fixtureNames == nil {
		t.Fatal("the fixtures could not be made")
	}
	return fixturesNS, fixtureNames
}

// collectionPath is the path of a served resource's collection (in ns
// when it is namespaced).
func collectionPath(t *testing.T, resource, ns string) string {
	t.Helper()
	res := servedResources(t)[resource]
	prefix := "/apis/" + res.gvr.GroupVersion().String()
	if res.gvr.Group == "" {
		prefix = "/api/" + res.gvr.Version
	}
	if res.namespaced {
		return prefix + "/namespaces/" + ns + "/" + resource
	}
	return prefix + "/" + resource
}

var (
	ageCell  = regexp.MustCompile(`^(\d+[smhdy])+$`)
	timeCell = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
	ipCell   = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
)

// normalizeTable blanks what changes from run to run: ages, creation
// times, allocated IPs, the namespace and the resourceVersion.
func normalizeTable(t *testing.T, table *metav1.Table, ns string) []byte {
	t.Helper()
	table.ResourceVersion = "RV"
	for i := range table.Rows {
		for j, c := range table.Rows[i].Cells {
			s, ok := c.(string)
			switch {
			case !ok:
			case ageCell.MatchString(s):
				table.Rows[i].Cells[j] = "<age>"
			case timeCell.MatchString(s):
				table.Rows[i].Cells[j] = "<time>"
			case ipCell.MatchString(s):
				table.Rows[i].Cells[j] = "<ip>"
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(table); err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(ns), []byte("NAMESPACE"))
}

// TestTableGolden checks the Table of one object of every resource, as
// kubectl get asks for it, against testdata/tables (regenerate with
// -update). The columns and cells were compared with kube-apiserver
// v1.37's for the same objects (`kubectl get` and `-o wide`).
func TestTableGolden(t *testing.T) {
	ns, names := tableFixtures(t)
	for _, res := range fixtureResources(t) {
		t.Run(res, func(t *testing.T) {
			waitSettled(t, res, names[res])
			path := collectionPath(t, res, ns) + "?includeObject=None&fieldSelector=" + url.QueryEscape("metadata.name="+names[res])
			r := do(t, req{path: path, headers: []string{"Accept: " + acceptTable + ",application/json"}})
			if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q %.300s", r.code, r.header.Get("Content-Type"), r.body)
			}
			var table metav1.Table
			if err := json.Unmarshal(r.body, &table); err != nil {
				t.Fatal(err)
			}
			// kube prints an IPAddress's age in a cell without a column.
			extraCells := 0
			if res == "ipaddresses" {
				extraCells = 1
			}
			if table.Kind != "Table" || table.APIVersion != "meta.k8s.io/v1" || len(table.Rows) != 1 ||
				len(table.ColumnDefinitions)+extraCells != len(table.Rows[0].Cells) {
				t.Fatalf("table: %s", r.body)
			}
			golden(t, "tables/"+res+".json", normalizeTable(t, &table, ns))
		})
	}
}

// TestTableIncludeObject checks the row objects of each includeObject
// policy, v1beta1 Tables, and kube's refusal of an unknown policy.
func TestTableIncludeObject(t *testing.T) {
	ns, _ := tableFixtures(t)
	path := "/api/v1/namespaces/" + ns + "/configmaps/table-cm"
	tests := []struct {
		name, query, accept  string
		tableVersion, object string // the row object's "kind apiVersion", "" for none
	}{
		{"default: metadata", "", acceptTable, "meta.k8s.io/v1", "PartialObjectMetadata meta.k8s.io/v1"},
		{"None", "?includeObject=None", acceptTable, "meta.k8s.io/v1", ""},
		{"Metadata", "?includeObject=Metadata", acceptTable, "meta.k8s.io/v1", "PartialObjectMetadata meta.k8s.io/v1"},
		{"Object", "?includeObject=Object", acceptTable, "meta.k8s.io/v1", "ConfigMap v1"},
		{"v1beta1", "", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", "meta.k8s.io/v1beta1", "PartialObjectMetadata meta.k8s.io/v1beta1"},
		{"YAML", "?includeObject=Object", "application/yaml;as=Table;v=v1;g=meta.k8s.io", "meta.k8s.io/v1", "ConfigMap v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, req{path: path + tc.query, headers: []string{"Accept: " + tc.accept}})
			if r.code != 200 {
				t.Fatalf("got %d %s", r.code, r.body)
			}
			var table struct {
				Kind, APIVersion string
				Rows             []struct {
					Cells  []interface{}
					Object *struct{ Kind, APIVersion string }
				}
			}
			if err := yaml.Unmarshal(r.body, &table); err != nil {
				t.Fatal(err)
			}
			if table.Kind != "Table" || table.APIVersion != tc.tableVersion || len(table.Rows) != 1 || table.Rows[0].Cells[0] != "table-cm" {
				t.Fatalf("table: %s", r.body)
			}
			got := ""
			if o := table.Rows[0].Object; o != nil {
				got = o.Kind + " " + o.APIVersion
			}
			if got != tc.object {
				t.Errorf("row object %q, want %q", got, tc.object)
			}
		})
	}
	r := do(t, req{path: path + "?includeObject=Foo", headers: []string{"Accept: " + acceptTable}})
	want := "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"Unable to convert to Table as requested: includeObject: Invalid value: \\\"Foo\\\": must be 'Metadata', 'Object', 'None', or empty\",\n  \"reason\": \"BadRequest\",\n  \"code\": 400\n}"
	if r.code != 400 || string(r.body) != want {
		t.Errorf("unknown includeObject: %d %s\nwant %s", r.code, r.body, want)
	}
}

// TestTableWatch watches every resource as kubectl get -w does (Table
// rows, WatchList): only the first event carries the column definitions,
// and the bookmark ending the initial events is a row too, whose object
// keeps its metadata (the annotation) even with includeObject=None, as in
// kube.
func TestTableWatch(t *testing.T) {
	ns, _ := tableFixtures(t)
	for _, res := range fixtureResources(t) {
		t.Run(res, func(t *testing.T) {
			t.Parallel()
			path := collectionPath(t, res, ns) + "?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&includeObject=None"
			r, lines := watchLines(t, req{path: path, headers: []string{"Accept: " + acceptTable}}, func(line []byte) bool {
				return bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`))
			})
			if r.code != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q %.300s", r.code, r.header.Get("Content-Type"), r.body)
			}
			var events []struct {
				Type   string
				Object json.RawMessage
			}
			for _, line := range lines {
				var ev struct {
					Type   string
					Object json.RawMessage
				}
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				events = append(events, ev)
			}
			if len(events) < 2 {
				t.Fatalf("%d events", len(events))
			}
			bookmarkSeen := false
			for i, ev := range events {
				var table metav1.Table
				if err := json.Unmarshal(ev.Object, &table); err != nil || table.Kind != "Table" || len(table.Rows) != 1 {
					t.Fatalf("event %d: %s", i, ev.Object)
				}
				if (i == 0) != (table.ColumnDefinitions != nil) || (i > 0 && !bytes.Contains(ev.Object, []byte(`"columnDefinitions":null`))) {
					t.Errorf("event %d: column definitions %v", i, table.ColumnDefinitions)
				}
				if len(table.Rows[0].Cells) == 0 {
					t.Errorf("event %d: no cells", i)
				}
				switch ev.Type {
				case "ADDED":
					if table.Rows[0].Object.Raw != nil && string(table.Rows[0].Object.Raw) != "null" {
						t.Errorf("event %d: includeObject=None, object %s", i, table.Rows[0].Object.Raw)
					}
				case "BOOKMARK":
					bookmarkSeen = true
					if !strings.Contains(string(table.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`) ||
						!strings.Contains(string(table.Rows[0].Object.Raw), `"k8s.io/initial-events-end":"true"`) {
						t.Errorf("bookmark row object: %s", table.Rows[0].Object.Raw)
					}
				default:
					t.Errorf("event %d: %s", i, ev.Type)
				}
			}
			if !bookmarkSeen {
				t.Errorf("no bookmark")
			}
		})
	}
}

// waitSettled waits until what the server's own controllers write to a
// fixture is there, so that its Table shows what a client sees: the
// Dangling condition kube's flow control sets on a flow schema (its
// MISSINGPL column).
func waitSettled(t *testing.T, resource, name string) {
	t.Helper()
	if resource != "flowschemas" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := dynamic.NewForConfigOrDie(srv.ClientConfig).Resource(servedResources(t)[resource].gvr).
		Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			if conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); len(conds) > 0 {
				return
			}
		}
	}
	t.Fatalf("%s %s: no status condition", resource, name)
}
