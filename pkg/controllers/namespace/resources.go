package namespace

import (
	"sort"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServedResources are the resources of groups (their preferred versions)
// the controller clears: namespaced, listed and deleted as a collection;
// in the order of their names ("deployments.apps", "pods").
func ServedResources(groups []rest.APIGroupInfo) []Resource {
	var resources []Resource
	for gvr, st := range rest.PreferredResources(groups) {
		scoper, scoped := st.(rest.Scoper)
		deleter, deletes := st.(rest.CollectionDeleter)
		lister, lists := st.(rest.Lister)
		if scoped && scoper.NamespaceScoped() && deletes && lists {
			resources = append(resources, Resource{GVR: gvr, Deleter: deleter, Lister: lister})
		}
	}
	sort.Slice(resources, func(i, j int) bool {
		return resources[i].GVR.GroupResource().String() < resources[j].GVR.GroupResource().String()
	})
	return resources
}
