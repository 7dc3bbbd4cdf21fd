package app

import (
	"sort"
	"strings"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/crd"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// namespaceController builds the namespace controller over namespaces,
// their finalize subresource and the served groups: it deletes every
// namespaced resource that can be listed and deleted as a collection.
func namespaceController(groups []rest.APIGroupInfo, namespaces namespace.Namespaces, finalizer rest.Updater, crds *crd.Controller) *namespace.Controller {
	var resources []namespace.Resource
	for _, g := range groups {
		for _, version := range g.PrioritizedVersions[:1] {
			storages := g.VersionedResourcesStorageMap[version]
			for name, st := range storages {
				scoper, scoped := st.(rest.Scoper)
				deleter, deletes := st.(rest.CollectionDeleter)
				lister, lists := st.(rest.Lister)
				if strings.Contains(name, "/") || !scoped || !scoper.NamespaceScoped() || !deletes || !lists {
					continue
				}
				qualified := name
				if g.GroupName != "" {
					qualified += "." + g.GroupName
				}
				resources = append(resources, namespace.Resource{Name: qualified, Deleter: deleter, Lister: lister})
			}
		}
	}
	sort.Slice(resources, func(i, j int) bool { return resources[i].Name < resources[j].Name })
	return namespace.New(namespaces, finalizer, resources, func() []namespace.Resource {
		// The custom resources served for now: kube's namespace controller
		// finds them in discovery.
		var out []namespace.Resource
		for _, served := range crds.Served() {
			if served.Store.NamespaceScoped() {
				name := served.Resource() + "." + served.Group.GroupName
				out = append(out, namespace.Resource{Name: name, Deleter: served.Store, Lister: served.Store})
			}
		}
		return out
	})
}
