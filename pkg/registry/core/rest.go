// Package core serves the core API group ("", version v1): its
// RESTStorageProvider, and the strategies, defaults, validation and table
// columns of each of its resources, one file per resource.
package core

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// SchemeGroupVersion is the group version this package serves.
var SchemeGroupVersion = schema.GroupVersion{Version: "v1"}

// RESTStorageProvider builds the storage of the core group.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return "" }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	resources := map[string]rest.Storage{}
	info := rest.APIGroupInfo{
		GroupName:                    "",
		PrioritizedVersions:          []string{SchemeGroupVersion.Version},
		VersionedResourcesStorageMap: map[string]map[string]rest.Storage{SchemeGroupVersion.Version: resources},
	}
	for _, r := range []generic.Resource{
		configMaps,
		podTemplates,
		replicationControllers,
	} {
		if _, err := r.Install(SchemeGroupVersion, getter, resources); err != nil {
			info.Destroy()
			return rest.APIGroupInfo{}, err
		}
	}
	if err := installNamespaces(getter, resources); err != nil {
		info.Destroy()
		return rest.APIGroupInfo{}, err
	}
	// Pods consult service accounts when the group serves them, whatever
	// the order resources are installed in: resources is complete before
	// the first request.
	lookups := &podLookups{serviceAccounts: func() rest.Getter {
		sa, _ := resources["serviceaccounts"].(rest.Getter)
		return sa
	}}
	if err := installPods(getter, resources, lookups); err != nil {
		info.Destroy()
		return rest.APIGroupInfo{}, err
	}
	return info, nil
}
