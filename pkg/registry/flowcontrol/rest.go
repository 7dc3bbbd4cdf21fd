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

// Storage is what the server's wiring uses of the group besides its
// routes: the handles the flow control controller (pkg/controllers/
// flowcontrol) writes kube's configuration through.
type Storage struct {
	FlowSchemas *generic.Store
	// FlowSchemaStatus serves flowschemas/status (the Dangling condition).
	FlowSchemaStatus rest.Updater
	PriorityLevels   *generic.Store
}

// NewRESTStorageProvider returns the provider of
// flowcontrol.apiserver.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[Storage] {
	return generic.NewGroupProvider(flowcontrolv1.SchemeGroupVersion, func(s []*generic.Store) Storage {
		return Storage{
			FlowSchemas:      s[0],
			FlowSchemaStatus: generic.NewStatusREST(s[0], flowSchemas.StatusStrategy),
			PriorityLevels:   s[1],
		}
	}, flowSchemas, priorityLevels)
}
