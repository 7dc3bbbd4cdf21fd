// Package apiregistration serves the apiregistration.k8s.io group (v1):
// apiservices and apiservices/status, with kube-aggregator's strategy and
// validation.
//
// The Local APIServices kube-apiserver lists (one per group version it
// serves) are kept by pkg/controllers/autoregister; those naming a
// service are proxied by pkg/apiserver/aggregator, their availability
// kept by pkg/controllers/availability.
package apiregistration

import (
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// GroupStorage is what the server's wiring uses of the group besides its
// routes: the store the autoregister controller writes through.
type GroupStorage struct {
	APIServices *generic.Store
	// APIServiceStatus serves apiservices/status, which the availability
	// controller keeps.
	APIServiceStatus rest.Updater
}

// NewRESTStorageProvider returns the provider of apiregistration.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(apiregistrationv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage {
		return GroupStorage{APIServices: s[0], APIServiceStatus: generic.NewStatusREST(s[0], apiServices.StatusStrategy)}
	}, apiServices)
}
