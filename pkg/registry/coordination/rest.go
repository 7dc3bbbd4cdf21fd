// Package coordination serves the coordination.k8s.io group (v1): leases.
package coordination

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// RESTStorageProvider builds the storage of coordination.k8s.io.
type RESTStorageProvider struct{}

var _ generic.RESTStorageProvider = RESTStorageProvider{}

// GroupName implements generic.RESTStorageProvider.
func (RESTStorageProvider) GroupName() string { return coordinationv1.GroupName }

// NewRESTStorage implements generic.RESTStorageProvider.
func (RESTStorageProvider) NewRESTStorage(getter generic.RESTOptionsGetter) (rest.APIGroupInfo, error) {
	return generic.BuildGroup(coordinationv1.SchemeGroupVersion, getter, leases)
}

var leases = generic.Resource{
	Name: "leases", Singular: "lease", Kind: "Lease", Namespaced: true,
	New:     func() runtime.Object { return &coordinationv1.Lease{} },
	NewList: func() runtime.Object { return &coordinationv1.LeaseList{} },
	Table: generic.TablePrinter{
		Columns: []metav1.TableColumnDefinition{
			generic.NameColumn,
			{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
			generic.AgeColumn,
		},
		Cells: func(obj runtime.Object) ([]interface{}, error) {
			l := obj.(*coordinationv1.Lease)
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return []interface{}{l.Name, holder, generic.TranslateTimestampSince(l.CreationTimestamp)}, nil
		},
	},
}
