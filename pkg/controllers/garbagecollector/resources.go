package garbagecollector

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServedResources are the resources of groups (their preferred versions)
// the collector follows: those that can be listed, watched, updated and
// deleted, and whose kind owner references can name, but events (of
// either group), which kube's collector ignores too.
func ServedResources(groups []rest.APIGroupInfo) []Resource {
	var resources []Resource
	for gvr, st := range rest.PreferredResources(groups) {
		gr := gvr.GroupResource()
		store, ok := st.(Storage)
		scoper, scoped := st.(rest.Scoper)
		if gr.Resource == "events" || !ok || !scoped {
			continue
		}
		if kind, ok := storageKind(st, gr.Group); ok {
			resources = append(resources, Resource{Name: gr.String(), Kind: kind, Namespaced: scoper.NamespaceScoped(), Store: store})
		}
	}
	return resources
}

// storageKind is the group and kind of the objects a storage of group
// serves, as owner references name them.
func storageKind(st rest.Storage, group string) (schema.GroupKind, bool) {
	kinds, _, err := api.Scheme().ObjectKinds(st.New())
	if err != nil {
		return schema.GroupKind{}, false
	}
	for _, k := range kinds {
		if k.Group == group {
			return k.GroupKind(), true
		}
	}
	return schema.GroupKind{}, false
}
