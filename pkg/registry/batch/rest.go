// Package batch serves the batch group (v1): jobs and cronjobs, with
// kube's defaults, validation, status subresources and table columns.
package batch

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

// NewRESTStorageProvider returns the provider of the batch group, of which the
// wiring uses nothing but its routes.
func NewRESTStorageProvider() generic.GroupProvider[struct{}] {
	return generic.NewGroupProvider[struct{}](batchv1.SchemeGroupVersion, nil, jobs, cronJobs)
}
