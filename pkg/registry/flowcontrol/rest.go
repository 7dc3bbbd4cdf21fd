// Package flowcontrol serves the flowcontrol.apiserver.k8s.io group (v1):
// flowschemas and prioritylevelconfigurations, the configuration of
// kube's API Priority and Fairness, with their status subresources.
//
// The objects kube creates at startup (mandatory and suggested) and the
// status it keeps on them come from pkg/controllers/flowcontrol; this
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

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(flowcontrolv1.SchemeGroupVersion, getter, flowSchemas, priorityLevels)
}
