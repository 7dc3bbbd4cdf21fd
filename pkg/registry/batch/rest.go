// Package batch serves the batch group (v1): jobs and cronjobs, with
// kube's defaults, validation, status subresources and table columns.
package batch

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// RESTStorageProvider builds the storage of the batch group, of which the
// wiring uses nothing but its routes.
type RESTStorageProvider = generic.GroupProvider[struct{}]

// NewRESTStorageProvider returns the provider of the batch group.
func NewRESTStorageProvider() RESTStorageProvider {
	return RESTStorageProvider{
		GroupVersion: batchv1.SchemeGroupVersion,
		Resources:    []generic.Resource{jobs, cronJobs},
	}
}
