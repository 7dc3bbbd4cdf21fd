package wire

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// servedResource is a resource the server lists, from its discovery.
type servedResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}

var (
	servedOnce sync.Once
	served     map[string]servedResource
)

// servedResources returns every resource with the list and create verbs,
// by name, at its group's preferred version; a name served by the core group and
// another (events) is the core group's.
func servedResources(t testing.TB) map[string]servedResource {
	t.Helper()
	servedOnce.Do(func() {
		groups, lists, err := discovery.NewDiscoveryClientForConfigOrDie(srv.ClientConfig).ServerGroupsAndResources()
		if err != nil {
			t.Fatal(err)
		}
		preferred := map[string]bool{}
		for _, g := range groups {
			preferred[g.PreferredVersion.GroupVersion] = true
		}
		served = map[string]servedResource{}
		for _, l := range lists {
			gv, _ := schema.ParseGroupVersion(l.GroupVersion)
			if !preferred[l.GroupVersion] {
				continue
			}
			for _, r := range l.APIResources {
				// Resources with objects a test can create (not
				// componentstatuses, computed on each read).
				if strings.Contains(r.Name, "/") || !contains(r.Verbs, "list") || !contains(r.Verbs, "create") {
					continue
				}
				if prev, seen := served[r.Name]; seen && prev.gvr.Group == "" {
					continue
				}
				served[r.Name] = servedResource{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced}
			}
		}
	})
	return served
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fixtureResources lists the resources with a fixture in
// testdata/objects, sorted.
func fixtureResources(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/objects/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	sort.Strings(out)
	return out
}

// createFixture creates the object of testdata/objects/<resource>.json
// (in ns when the resource is namespaced; NAMESPACE in the file names it).
// A cluster-scoped object's name gets the namespace as suffix, so that
// tests do not collide; but an IPAddress is named by its address, and is
// made once per server.
func createFixture(t testing.TB, ns, resource string) *unstructured.Unstructured {
	t.Helper()
	res, ok := servedResources(t)[resource]
	if !ok {
		t.Fatalf("%s is not served", resource)
	}
	obj := readFixture(t, ns, resource)
	client := dynamic.NewForConfigOrDie(srv.ClientConfig).Resource(res.gvr)
	var (
		created *unstructured.Unstructured
		err     error
	)
	if res.namespaced {
		created, err = client.Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
	} else {
		if _, err := netip.ParseAddr(obj.GetName()); err != nil {
			obj.SetName(obj.GetName() + "-" + ns)
		}
		created, err = client.Create(context.Background(), obj, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("creating the %s fixture: %v", resource, err)
	}
	return created
}

// readFixture reads the object of testdata/objects/<resource>.json, with
// NAMESPACE replaced by ns.
func readFixture(t testing.TB, ns, resource string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/objects/" + resource + ".json")
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(string(data), "NAMESPACE", ns)), &obj.Object); err != nil {
		t.Fatalf("%s: %v", resource, err)
	}
	return obj
}
