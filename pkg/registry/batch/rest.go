// Package batch serves the batch group (v1): jobs and cronjobs, with
// kube's defaults, validation, status subresources and table columns.
package batch

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of the batch group.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return batchv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(batchv1.SchemeGroupVersion, getter, jobs, cronJobs)
}
