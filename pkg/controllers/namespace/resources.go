package namespace

import (
	"sort"
	"strings"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServedResources are the resources of groups (their preferred versions)
// the controller clears: namespaced, listed and deleted as a collection;
// named "pods", "deployments.apps", in the order of their names.
func ServedResources(groups []rest.APIGroupInfo) []Resource {
	var resources []Resource
	for _, g := range groups {
		for name, st := range g.VersionedResourcesStorageMap[g.PrioritizedVersions[0]] {
			scoper, scoped := st.(rest.Scoper)
			deleter, deletes := st.(rest.CollectionDeleter)
			lister, lists := st.(rest.Lister)
			if strings.Contains(name, "/") || !scoped || !scoper.NamespaceScoped() || !deletes || !lists {
				continue
			}
			if g.GroupName != "" {
				name += "." + g.GroupName
			}
			resources = append(resources, Resource{Name: name, Deleter: deleter, Lister: lister})
		}
	}
	sort.Slice(resources, func(i, j int) bool { return resources[i].Name < resources[j].Name })
	return resources
}
