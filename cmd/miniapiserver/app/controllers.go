package app

import (
	"sort"
	"strings"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/namespace"
	flowcontrolregistry "github.com/miniapiserver/miniapiserver/pkg/registry/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// namespaceController builds the namespace controller over namespaces,
// their finalize subresource and the served groups: it deletes every
// namespaced resource that can be listed and deleted as a collection.
func namespaceController(groups []rest.APIGroupInfo, namespaces namespace.Namespaces, finalizer rest.Updater) *namespace.Controller {
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
	return namespace.New(namespaces, finalizer, resources)
}

// flowControlController builds the controller that keeps kube's flow
// control configuration, over the flowcontrol.apiserver.k8s.io storages.
func flowControlController(s flowcontrolregistry.Storage) *flowcontrol.Controller {
	return flowcontrol.New(flowcontrol.Config{FlowSchemas: s.FlowSchemas, FlowSchemaStatus: s.FlowSchemaStatus, PriorityLevels: s.PriorityLevels})
}
