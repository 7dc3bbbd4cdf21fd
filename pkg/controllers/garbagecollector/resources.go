package garbagecollector

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServedResources are the resources of groups (their preferred versions)
// the collector follows: those that can be listed, watched, updated and
// deleted, and whose kind owner references can name, but events, which
// kube's collector ignores too.
func ServedResources(groups []rest.APIGroupInfo) []Resource {
	var resources []Resource
	for _, g := range groups {
		for name, st := range g.VersionedResourcesStorageMap[g.PrioritizedVersions[0]] {
			store, ok := st.(Storage)
			scoper, scoped := st.(rest.Scoper)
			if strings.Contains(name, "/") || name == "events" || !ok || !scoped {
				continue
			}
			kind, ok := storageKind(st, g.GroupName)
			if !ok {
				continue
			}
			if g.GroupName != "" {
				name += "." + g.GroupName
			}
			resources = append(resources, Resource{Name: name, Kind: kind, Namespaced: scoper.NamespaceScoped(), Store: store})
		}
	}
	return resources
}

// storageKind is the group and kind of the objects a storage of group
// serves, as owner references name them.
func storageKind(st rest.Storage, group string) (schema.GroupKind, bool) {
	kinds, _, err := api.Scheme.ObjectKinds(st.New())
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
