package kubectl

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
)

// inNS prefixes kubectl arguments with the test's namespace.
func inNS(args ...string) []string { return append([]string{"-n", "{ns}"}, args...) }

// TestGet creates objects from a multi-document file and from a kind:
// List, and reads them back in every output kubectl has.
func TestGet(t *testing.T) {
	needKubectl(t)
	runScenario(t, "get", []step{
		{name: "create multi-document", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "create List", args: inNS("create", "-f", "-"), manifest: "list.yaml"},
		{name: "create replicated", args: inNS("create", "-f", "-"), manifest: "replicated.yaml"},
		{name: "create existing", args: inNS("create", "-f", "-"), manifest: "multi.yaml"},
		{name: "get several kinds", args: inNS("get", "deployments,services,configmaps,secrets,leases,statefulsets")},
		{name: "get wide", args: inNS("get", "deployments,services,statefulsets,replicasets,replicationcontrollers,daemonsets", "-o", "wide")},
		{name: "get all", args: inNS("get", "all")},
		{name: "get show labels", args: inNS("get", "configmaps,secrets,leases", "--show-labels")},
		{name: "get label selector", args: inNS("get", "all", "-l", "app=demo", "-o", "name")},
		{name: "get field selector", args: inNS("get", "configmaps", "--field-selector", "metadata.name!=kube-root-ca.crt")},
		{name: "get sort by", args: inNS("get", "deployments,statefulsets,replicasets,replicationcontrollers", "--sort-by", ".spec.replicas", "-o", "name")},
		{name: "get json", args: inNS("get", "deployment", "web", "-o", "json")},
		{name: "get yaml", args: inNS("get", "service", "web", "-o", "yaml")},
		{name: "get yaml list", args: inNS("get", "leases,secrets", "-l", "app=demo", "-o", "yaml")},
		{name: "get managed fields", args: inNS("get", "configmap", "settings", "-o", "yaml", "--show-managed-fields")},
		{name: "get jsonpath", args: inNS("get", "deployments,statefulsets", "-o", `jsonpath={range .items[*]}{.kind}/{.metadata.name} {.spec.replicas} {.spec.template.spec.containers[0].image}{"\n"}{end}`)},
		{name: "get custom columns", args: inNS("get", "deployments,statefulsets,replicasets", "-o", "custom-columns=KIND:.kind,NAME:.metadata.name,REPLICAS:.spec.replicas,IMAGE:.spec.template.spec.containers[*].image")},
		{name: "get go template", args: inNS("get", "configmap", "settings", "-o", "go-template={{.data.mode}}")},
		{name: "get name", args: inNS("get", "deployment,service,configmap,secret,lease,statefulset", "-l", "app=demo", "-o", "name")},
		{name: "get missing", args: inNS("get", "deployment", "nothere")},
		{name: "get missing ignored", args: inNS("get", "deployment", "nothere", "--ignore-not-found")},
		{name: "get short names", args: inNS("get", "deploy,svc,cm,sts,rs,rc,ds", "-o", "name")},
		{name: "get by file", args: inNS("get", "-f", "-"), manifest: "multi.yaml"},
		{name: "api-resources apps", args: []string{"api-resources", "--api-group=apps"}},
		{name: "api-resources wide coordination", args: []string{"api-resources", "--api-group=coordination.k8s.io", "-o", "wide"}},
		{name: "api-resources namespaced apps names", args: []string{"api-resources", "--namespaced=true", "--api-group=apps", "-o", "name"}},
		{name: "explain field", args: []string{"explain", "deployment.spec.replicas"}},
		{name: "explain resource", args: []string{"explain", "lease.spec"}},
		{name: "explain recursive", args: []string{"explain", "configmap", "--recursive"}},
	})
}

// TestAPIResourcesAndVersions checks what only this server lists: kube
// serves more groups, so these are not compared with its output.
func TestAPIResourcesAndVersions(t *testing.T) {
	needKubectl(t)
	tg := testTarget(t)
	versions := tg.run(t, invocation{args: []string{"api-versions"}})
	if want := servedGroupVersions(t); versions != want {
		t.Errorf("api-versions:\n%s\nwant:\n%s", versions, want)
	}
	wide := tg.run(t, invocation{args: []string{"api-resources", "-o", "wide", "--api-group="}})
	for _, want := range []string{
		"NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES",
		"bindings v1 true Binding create",
		"configmaps cm v1 true ConfigMap create,delete,deletecollection,get,list,patch,update,watch",
		"events ev v1 true Event create,delete,deletecollection,get,list,patch,update,watch",
		"namespaces ns v1 false Namespace create,delete,get,list,patch,update,watch",
		"pods po v1 true Pod create,delete,deletecollection,get,list,patch,update,watch all",
		"services svc v1 true Service create,delete,deletecollection,get,list,patch,update,watch all",
	} {
		found := false
		for _, line := range strings.Split(wide, "\n") {
			found = found || squeeze(line) == want
		}
		if !found {
			t.Errorf("api-resources -o wide lacks %q:\n%s", want, wide)
		}
	}
}

// servedGroupVersions is what kubectl api-versions prints for the groups
// the server's discovery lists: group/version lines, sorted.
func servedGroupVersions(t *testing.T) string {
	t.Helper()
	groups, err := discovery.NewDiscoveryClientForConfigOrDie(srv.ClientConfig).ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			lines = append(lines, v.GroupVersion+"\n")
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "")
}

// squeeze joins the fields of a line with single spaces.
func squeeze(line string) string { return strings.Join(strings.Fields(line), " ") }

// TestChunkSize lists many objects in pages of two: kubectl follows the
// continue tokens to the end, and shows every object once.
func TestChunkSize(t *testing.T) {
	needKubectl(t)
	tg := testTarget(t)
	ns := tg.namespace(t, "kubectl-chunks")
	var manifest strings.Builder
	for i := 0; i < 25; i++ {
		fmt.Fprintf(&manifest, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: s%02d, labels: {chunked: \"yes\"}}\nstringData: {i: \"%d\"}\n", i, i)
	}
	tg.run(t, invocation{args: []string{"-n", ns, "create", "-f", "-"}, stdin: manifest.String()})
	out := tg.run(t, invocation{args: []string{"-n", ns, "get", "secrets", "-l", "chunked=yes", "--chunk-size=2", "-o", "name", "-v=6"}})
	var names []string
	pages := 0
	page := regexp.MustCompile(`GET https://\S+/secrets\?(continue=\S+&)?labelSelector=chunked%3Dyes&limit=2 200 OK`)
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "secret/"):
			names = append(names, line)
		case page.MatchString(line):
			pages++
		}
	}
	if len(names) != 25 || names[0] != "secret/s00" || names[24] != "secret/s24" || pages != 13 {
		t.Errorf("%d names in %d pages, want 25 in 13:\n%s", len(names), pages, out)
	}
	table := tg.run(t, invocation{args: []string{"-n", ns, "get", "secrets", "-l", "chunked=yes", "--chunk-size=2"}})
	if lines := strings.Split(strings.TrimSpace(table), "\n"); len(lines) != 26 || squeeze(lines[0]) != "NAME TYPE DATA AGE" {
		t.Errorf("the table of pages has %d lines:\n%s", len(lines), table)
	}
}
