package placement

import (
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDiscovery checks the discovery entries of the three groups against
// kube-apiserver v1.37.2's (kubectl's short names and the scheduler's
// informers rely on them).
func TestDiscovery(t *testing.T) {
	t.Parallel()
	type entry struct {
		Namespaced bool
		Kind       string
		Verbs      []string
		ShortNames []string
		Singular   string
	}
	crud := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	sub := []string{"get", "patch", "update"}
	want := map[string]map[string]entry{
		"storage.k8s.io/v1": {
			"csidrivers":               {false, "CSIDriver", crud, nil, "csidriver"},
			"csinodes":                 {false, "CSINode", crud, nil, "csinode"},
			"csinodes/status":          {false, "CSINode", sub, nil, ""},
			"csistoragecapacities":     {true, "CSIStorageCapacity", crud, nil, "csistoragecapacity"},
			"storageclasses":           {false, "StorageClass", crud, []string{"sc"}, "storageclass"},
			"volumeattachments":        {false, "VolumeAttachment", crud, nil, "volumeattachment"},
			"volumeattachments/status": {false, "VolumeAttachment", sub, nil, ""},
			"volumeattributesclasses":  {false, "VolumeAttributesClass", crud, []string{"vac"}, "volumeattributesclass"},
		},
		"scheduling.k8s.io/v1": {
			"priorityclasses": {false, "PriorityClass", crud, []string{"pc"}, "priorityclass"},
		},
		"node.k8s.io/v1": {
			"runtimeclasses": {false, "RuntimeClass", crud, nil, "runtimeclass"},
		},
	}
	client := clientset(t).Discovery()
	for gv, resources := range want {
		list, err := client.ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery of %s: %v", gv, err)
		}
		got := map[string]metav1.APIResource{}
		for _, r := range list.APIResources {
			got[r.Name] = r
		}
		if len(got) != len(resources) {
			t.Errorf("%s lists %d resources, want %d", gv, len(got), len(resources))
		}
		for name, w := range resources {
			r, ok := got[name]
			if !ok {
				t.Errorf("%s: %s not listed", gv, name)
				continue
			}
			g := entry{r.Namespaced, r.Kind, slices.Sorted(slices.Values(r.Verbs)), r.ShortNames, r.SingularName}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("%s %s: got %+v, want %+v", gv, name, g, w)
			}
		}
	}
}
