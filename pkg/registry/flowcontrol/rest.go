// Package flowcontrol serves the flowcontrol.apiserver.k8s.io group (v1):
// flowschemas and prioritylevelconfigurations, the configuration of
// kube's API Priority and Fairness, with their status subresources.
//
// The objects kube creates at startup (mandatory and suggested) and the
// status it keeps on them come from pkg/controllers/apfconfig; this
// package stores them with kube's strategies and validation, which
// refuses changes to the mandatory objects' specs.
package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of flowcontrol.apiserver.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return flowcontrolv1.GroupName }

// Storage is what the server's wiring uses of the group besides its
// routes: the handles the flow control controller (pkg/controllers/
// flowcontrol) writes kube's configuration through.
type Storage struct {
	FlowSchemas *generic.Store
	// FlowSchemaStatus serves flowschemas/status (the Dangling condition).
	FlowSchemaStatus rest.Updater
	PriorityLevels   *generic.Store
}

// NewRESTStorage implements generic.RESTStorageProvider.
func (p RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	_, info, err := p.NewGroupStorage(getter)
	return info, err
}

// NewGroupStorage builds the group: the APIGroupInfo its routes are
// mounted from, and the typed handles of what the wiring uses besides.
func (RESTStorageProvider) NewGroupStorage(getter generic.RESTOptionsGetter) (Storage, rest.APIGroupInfo, error) {
	gv := flowcontrolv1.SchemeGroupVersion
	info, stores, err := generic.BuildGroupStores(gv, getter, flowSchemas, priorityLevels)
	if err != nil {
		return Storage{}, rest.APIGroupInfo{}, err
	}
	return Storage{
		FlowSchemas:      stores[0],
		PriorityLevels:   stores[1],
		FlowSchemaStatus: info.VersionedResourcesStorageMap[gv.Version]["flowschemas/status"].(rest.Updater),
	}, info, nil
}
