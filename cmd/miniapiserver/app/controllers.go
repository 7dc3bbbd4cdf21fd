package app

import (
	"fmt"
	"sort"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/miniapiserver/miniapiserver/pkg/controllers/flowcontrol"
	"github.com/miniapiserver/miniapiserver/pkg/controllers/namespace"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// namespaceController builds the namespace controller over the served
// groups: it deletes every namespaced resource that can be listed and
// deleted as a collection.
func namespaceController(groups []rest.APIGroupInfo) *namespace.Controller {
	var resources []namespace.Resource
	var namespaces namespace.Namespaces
	var finalizer rest.Updater
	for _, g := range groups {
		for _, version := range g.PrioritizedVersions[:1] {
			storages := g.VersionedResourcesStorageMap[version]
			for name, st := range storages {
				if g.GroupName == "" && name == "namespaces" {
					namespaces, _ = st.(namespace.Namespaces)
				}
				if g.GroupName == "" && name == "namespaces/finalize" {
					finalizer, _ = st.(rest.Updater)
				}
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
func flowControlController(groups []rest.APIGroupInfo) (*flowcontrol.Controller, error) {
	for _, g := range groups {
		if g.GroupName != flowcontrolv1.GroupName {
			continue
		}
		storages := g.VersionedResourcesStorageMap[flowcontrolv1.SchemeGroupVersion.Version]
		fs, okFS := storages["flowschemas"].(flowcontrol.Storage)
		status, okStatus := storages["flowschemas/status"].(rest.Updater)
		pl, okPL := storages["prioritylevelconfigurations"].(flowcontrol.Storage)
		if !okFS || !okStatus || !okPL {
			break
		}
		return flowcontrol.New(flowcontrol.Config{FlowSchemas: fs, FlowSchemaStatus: status, PriorityLevels: pl}), nil
	}
	return nil, fmt.Errorf("the %s storages are missing", flowcontrolv1.GroupName)
}
