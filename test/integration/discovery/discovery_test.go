// Package discovery compares the server's discovery with kube-apiserver
// v1.37.2's, recorded by hack/record-discovery.sh into testdata/kube:
// every group, version and resource with its verbs, kind, scope, short
// names, categories, singular name, storage version hash and
// subresources, in the aggregated (apidiscovery.k8s.io/v2) and the
// legacy documents, and as `kubectl api-resources` prints them. The only
// differences accepted are those allowed_test.go lists, each with the
// issue that owns it.
package discovery

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/cmd/miniapiserver/app/testserver"
)

const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// golden is the folder of the reference's recording.
var golden = filepath.Join("testdata", "kube")

// srv is the server every test of the package shares.
var srv *testserver.TestServer

func TestMain(m *testing.M) {
	testserver.Main(m, func(ts *testserver.TestServer, _ string) { srv = ts })
}

// TestAggregatedDiscoveryAsKube compares /api and /apis, aggregated,
// resource by resource and subresource by subresource, and the order of
// groups, versions and resources both serve.
func TestAggregatedDiscoveryAsKube(t *testing.T) {
	var want, got []apidiscoveryv2.APIGroupDiscovery
	for _, path := range []string{"/api", "/apis"} {
		var w, g apidiscoveryv2.APIGroupDiscoveryList
		readJSON(t, filepath.Join(golden, "aggregated"+strings.ReplaceAll(path, "/", "_")+".json"), &w)
		getJSON(t, path, acceptAggregated, &g)
		want, got = append(want, w.Items...), append(got, g.Items...)
	}
	wantEntries, wantOrder := flattenAggregated(want)
	gotEntries, gotOrder := flattenAggregated(got)
	compare(t, gotEntries, wantEntries)
	all := allowances()
	for what, a := range all {
		if !coversAny(all, what, wantEntries) {
			t.Errorf("allowed_test.go: %q (%s) names nothing kube-apiserver serves", what, a.why)
		}
	}
	compareOrder(t, gotOrder, wantOrder, all)
}

// TestLegacyDiscoveryAsKube compares /api/v1 and every /apis/<group>/<version>
// document: the same fields and the storage version hashes.
func TestLegacyDiscoveryAsKube(t *testing.T) {
	var want map[string]metav1.APIResourceList
	readJSON(t, filepath.Join(golden, "legacy.json"), &want)
	var groups metav1.APIGroupList
	getJSON(t, "/apis", "application/json", &groups)
	paths := []string{"/api/v1"}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
	}
	got := map[string]metav1.APIResourceList{}
	for _, p := range paths {
		var l metav1.APIResourceList
		getJSON(t, p, "application/json", &l)
		got[p] = l
	}
	compare(t, flattenLegacy(got), flattenLegacy(want))
}

// TestKubectlAPIResources compares `kubectl api-resources -o wide`, which
// also shows which version of each group kubectl prefers.
func TestKubectlAPIResources(t *testing.T) {
	kubectl := kubectlCommand(t)
	out, err := kubectl("api-resources", "-o", "wide", "--sort-by", "name")
	if err != nil {
		t.Fatalf("kubectl api-resources: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(golden, "api-resources.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, wanted := parseAPIResources(t, out), parseAPIResources(t, want)
	// Compare the columns the recording has: another kubectl may print more.
	for _, row := range got {
		for column := range row {
			if _, ok := wanted[sortedKeys(wanted)[0]][column]; !ok {
				delete(row, column)
			}
		}
	}
	compare(t, got, wanted)
}

// compare checks that got has what want has, entry by entry, apart from
// the allowed differences, and that every allowed difference still is one.
// (Whether each allowance names something kube serves is checked on the
// aggregated documents, the only ones that list every version and
// subresource.)
func compare(t *testing.T, got, want map[string]map[string]any) {
	t.Helper()
	all := allowances()
	for _, key := range sortedKeys(want) {
		g, served := got[key]
		if a, ok := allowedBy(all, key); ok {
			if served {
				t.Errorf("%s is served now: delete %q (%s) from allowed_test.go", key, a.what, a.why)
			}
			continue
		}
		if !served {
			t.Errorf("%s: kube-apiserver serves it, this server does not: %s", key, compact(want[key]))
			continue
		}
		for _, d := range diffFields(g, want[key], fieldDifferences[key]) {
			t.Errorf("%s: %s", key, d)
		}
	}
	for _, key := range sortedKeys(got) {
		if _, ok := want[key]; !ok {
			t.Errorf("%s: served here, not by kube-apiserver: %s", key, compact(got[key]))
		}
	}
}

// coversAny reports whether the allowance what covers an entry of want.
func coversAny(all map[string]allowance, what string, want map[string]map[string]any) bool {
	for key := range want {
		if a, ok := allowedBy(all, key); ok && a.what == what {
			return true
		}
	}
	return false
}

// compareOrder checks that the groups, the versions of each group
// (preferred first) and the resources of each version come in kube's
// order, among those both serve and no allowance covers.
func compareOrder(t *testing.T, got, want map[string][]string, all map[string]allowance) {
	t.Helper()
	for _, list := range sortedKeys(want) {
		w := common(want[list], got[list], all)
		g := common(got[list], want[list], all)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("order of %s:\n got %v\nwant %v", list, g, w)
		}
	}
}

// common returns the keys of a that b has too and no allowance covers, in
// a's order.
func common(a, b []string, all map[string]allowance) []string {
	var out []string
	for _, k := range a {
		if _, ok := allowedBy(all, k); !ok && slices.Contains(b, k) {
			out = append(out, k)
		}
	}
	return out
}

// flattenAggregated returns every resource and subresource of the
// aggregated documents as its fields, keyed "gv resource" and
// "gv resource/subresource" (gv "v1" for the core group), and the orders
// to keep: "groups" (each as "gv *" of its preferred version), "versions
// of G" (each as "gv *") and "resources of GV".
func flattenAggregated(groups []apidiscoveryv2.APIGroupDiscovery) (map[string]map[string]any, map[string][]string) {
	entries := map[string]map[string]any{}
	order := map[string][]string{}
	for _, g := range groups {
		for i, v := range g.Versions {
			gv := strings.TrimPrefix(g.Name+"/"+v.Version, "/")
			if i == 0 {
				order["groups"] = append(order["groups"], gv+" *")
			}
			order["versions of "+g.Name] = append(order["versions of "+g.Name], gv+" *")
			for _, r := range v.Resources {
				key := gv + " " + r.Resource
				order["resources of "+gv] = append(order["resources of "+gv], key)
				for _, s := range r.Subresources {
					entries[key+"/"+s.Subresource] = fields(s)
				}
				r.Subresources = nil
				entries[key] = fields(r)
			}
		}
	}
	return entries, order
}

// flattenLegacy returns every entry of the legacy documents (keyed by
// their paths) as its fields, keyed "gv name".
func flattenLegacy(lists map[string]metav1.APIResourceList) map[string]map[string]any {
	entries := map[string]map[string]any{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			entries[l.GroupVersion+" "+r.Name] = fields(r)
		}
	}
	return entries
}

// parseAPIResources reads `kubectl api-resources -o wide`: columns start
// where their headers do (SHORTNAMES and CATEGORIES may be empty).
func parseAPIResources(t *testing.T, out []byte) map[string]map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	header := lines[0]
	names := strings.Fields(header)
	starts := make([]int, len(names))
	for i, n := range names {
		starts[i] = strings.Index(header, n)
	}
	entries := map[string]map[string]any{}
	for _, line := range lines[1:] {
		row := map[string]any{}
		for i, n := range names {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			row[n] = strings.TrimSpace(line[min(starts[i], len(line)):end])
		}
		entries[fmt.Sprint(row["APIVERSION"], " ", row["NAME"])] = row
	}
	if len(entries) == 0 {
		t.Fatalf("no resources in:\n%s", out)
	}
	return entries
}

// fields returns v's JSON fields.
func fields(v any) map[string]any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		panic(err)
	}
	return m
}

// diffFields describes every field where got and want differ but those
// allowed lists, and every field allowed that want has and got no longer
// differs in.
func diffFields(got, want map[string]any, allowed map[string]string) []string {
	var diffs []string
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		why, ok := allowed[k]
		switch same := reflect.DeepEqual(got[k], want[k]); {
		case !same && !ok:
			diffs = append(diffs, fmt.Sprintf("%s: got %s, want %s", k, compact(got[k]), compact(want[k])))
		case same && ok && want[k] != nil:
			diffs = append(diffs, fmt.Sprintf("%s no longer differs: delete it (%s) from allowed_test.go", k, why))
		}
	}
	return diffs
}

func compact(v any) string {
	if v == nil {
		return "(none)"
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func readJSON(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (record it with hack/record-discovery.sh)", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// getJSON GETs path from the server with the Accept header given and
// decodes the answer into v.
func getJSON(t *testing.T, path, accept string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := srv.HTTPClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %.300s", path, resp.StatusCode, err, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// kubectlCommand returns a runner of kubectl against the server, with a
// discovery cache of the test's own; it skips the test without kubectl.
func kubectlCommand(t *testing.T) func(args ...string) ([]byte, error) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not on PATH: install kubectl (v1.32 or later) to compare `kubectl api-resources`")
	}
	cache := t.TempDir()
	return func(args ...string) ([]byte, error) {
		base := []string{"--server", srv.URL, "--token", srv.Token, "--insecure-skip-tls-verify", "--cache-dir", cache}
		return exec.Command("kubectl", append(base, args...)...).CombinedOutput()
	}
}
