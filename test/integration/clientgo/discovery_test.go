package clientgo

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// findResource returns the resource named name of a list of resource
// lists.
func findResource(lists []*metav1.APIResourceList, gv, name string) *metav1.APIResource {
	for _, l := range lists {
		if l.GroupVersion != gv {
			continue
		}
		for i := range l.APIResources {
			if l.APIResources[i].Name == name {
				return &l.APIResources[i]
			}
		}
	}
	return nil
}

// TestDiscovery reads the API's discovery as client-go does: the
// aggregated documents of /api and /apis (two requests for everything),
// preferred resources, one group version, and through the memory cache.
// (kubectl, in test/integration/kubectl, reads it through the disk cache.)
func TestDiscovery(t *testing.T) {
	cfg, rec := recordedConfig()
	d := discovery.NewDiscoveryClientForConfigOrDie(cfg)

	groups, resources, err := d.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name+"/"+g.PreferredVersion.Version)
	}
	if want := []string{"/v1", "apiregistration.k8s.io/v1", "apps/v1", "events.k8s.io/v1", "authentication.k8s.io/v1", "authorization.k8s.io/v1", "autoscaling/v2", "batch/v1", "certificates.k8s.io/v1", "networking.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "storage.k8s.io/v1", "admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "scheduling.k8s.io/v1", "coordination.k8s.io/v1", "node.k8s.io/v1", "discovery.k8s.io/v1", "resource.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1", "storagemigration.k8s.io/v1"}; !*reference && !slices.Equal(names, want) {
		t.Errorf("groups %v, want %v", names, want)
	}
	for _, e := range rec.find("/api") {
		if !strings.HasPrefix(e.accept, "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList") &&
			!strings.HasPrefix(e.accept, aggregatedDiscovery) {
			t.Errorf("%s asked %q", e.url, e.accept)
		}
		if !strings.Contains(e.responseType, "as=APIGroupDiscoveryList") {
			t.Errorf("%s answered %q", e.url, e.responseType)
		}
	}
	if n := len(rec.find("/api")); n != 2 {
		t.Errorf("%d discovery requests, want 2 (/api and /apis)", n)
	}
	deployments := findResource(resources, "apps/v1", "deployments")
	if deployments == nil || deployments.Kind != "Deployment" || !deployments.Namespaced || !slices.Equal(deployments.ShortNames, []string{"deploy"}) ||
		!slices.Equal(deployments.Categories, []string{"all"}) || deployments.SingularName != "deployment" ||
		!slices.Equal(deployments.Verbs, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}) {
		t.Errorf("deployments: %+v", deployments)
	}
	if scale := findResource(resources, "apps/v1", "deployments/scale"); scale == nil || scale.Group != "autoscaling" || scale.Version != "v1" || scale.Kind != "Scale" {
		t.Errorf("deployments/scale: %+v", scale)
	}
	if binding := findResource(resources, "v1", "pods/binding"); binding == nil || !slices.Equal(binding.Verbs, []string{"create"}) {
		t.Errorf("pods/binding: %+v", binding)
	}

	preferred, err := d.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	if ns := findResource(preferred, "v1", "namespaces"); ns == nil || ns.Namespaced || findResource(preferred, "v1", "pods/status") != nil {
		t.Errorf("preferred resources: namespaces %+v, or subresources listed", ns)
	}
	namespaced, err := d.ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	if findResource(namespaced, "v1", "nodes") != nil || findResource(namespaced, "coordination.k8s.io/v1", "leases") == nil {
		t.Error("preferred namespaced resources: nodes listed, or leases not")
	}
	apps, err := d.ServerResourcesForGroupVersion("apps/v1")
	if err != nil || apps.GroupVersion != "apps/v1" || len(apps.APIResources) != 12 {
		t.Errorf("apps/v1: %v, %d resources", err, len(apps.APIResources))
	}

	t.Run("memory cache", func(t *testing.T) {
		cfg, rec := recordedConfig()
		cached := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg))
		for i := 0; i < 3; i++ {
			if _, _, err := cached.ServerGroupsAndResources(); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(rec.find("/api")); n != 2 {
			t.Errorf("%d requests for three reads, want 2", n)
		}
		cached.Invalidate()
		if _, err := cached.ServerResourcesForGroupVersion("coordination.k8s.io/v1"); err != nil {
			t.Fatal(err)
		}
		if n := len(rec.find("/api")); n != 4 {
			t.Errorf("%d requests after an invalidation, want 4", n)
		}
	})
}

// TestRESTMapper maps kinds, resources and short names with the REST
// mappers built from discovery.
func TestRESTMapper(t *testing.T) {
	d := memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(config()))
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(d), d, nil)
	cases := []struct {
		resource string
		gvr      schema.GroupVersionResource
		kind     string
		scope    meta.RESTScopeName
	}{
		{"deploy", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", meta.RESTScopeNameNamespace},
		{"po", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", meta.RESTScopeNameNamespace},
		{"leases", schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, "Lease", meta.RESTScopeNameNamespace},
		{"ns", schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", meta.RESTScopeNameRoot},
		{"statefulset", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "StatefulSet", meta.RESTScopeNameNamespace},
		{"pv", schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, "PersistentVolume", meta.RESTScopeNameRoot},
	}
	for _, tc := range cases {
		t.Run(tc.resource, func(t *testing.T) {
			gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Resource: tc.resource})
			if err != nil || gvr != tc.gvr {
				t.Fatalf("resource %v %v, want %v", gvr, err, tc.gvr)
			}
			gvk, err := mapper.KindFor(schema.GroupVersionResource{Resource: tc.resource})
			if err != nil || gvk.Kind != tc.kind {
				t.Fatalf("kind %v %v", gvk, err)
			}
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil || mapping.Resource != tc.gvr || mapping.Scope.Name() != tc.scope {
				t.Errorf("mapping %+v %v", mapping, err)
			}
		})
	}
	t.Run("categories", func(t *testing.T) {
		all, err := restmapper.NewDiscoveryCategoryExpander(d).Expand("all")
		if !err || !slices.Contains(all, schema.GroupResource{Group: "apps", Resource: "deployments"}) || !slices.Contains(all, schema.GroupResource{Resource: "pods"}) ||
			slices.Contains(all, schema.GroupResource{Resource: "configmaps"}) {
			t.Errorf("all: %v %v", all, err)
		}
	})
	t.Run("not served", func(t *testing.T) {
		onlyHere(t)
		_, err := mapper.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1")
		if !meta.IsNoMatchError(err) {
			t.Errorf("example.com Widget: %v", err)
		}
	})
}
