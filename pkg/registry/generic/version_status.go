package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// VersionedStatusREST serves a "/status" subresource at another Version:
// GET reads the object, PUT and PATCH change only its status, converting
// at the boundary as VersionedStore does.
type VersionedStatusREST struct {
	status *StatusREST
	versioner
}

var (
	_ rest.Getter               = (*VersionedStatusREST)(nil)
	_ rest.Updater              = (*VersionedStatusREST)(nil)
	_ rest.Defaulter            = (*VersionedStatusREST)(nil)
	_ rest.ResetFieldsStrategy  = (*VersionedStatusREST)(nil)
	_ rest.StoredMetadataReader = (*VersionedStatusREST)(nil)
)

// NewVersionedStatusREST returns status served at v, over the Store main
// keeps at its own kind. v's Strategy, the main resource's, does not
// apply: status keeps its own.
func NewVersionedStatusREST(status *StatusREST, main *Store, v Version) (*VersionedStatusREST, error) {
	if err := v.check(main); err != nil {
		return nil, err
	}
	return &VersionedStatusREST{status: status, versioner: versioner{version: v, storageKind: main.kind}}, nil
}

// New implements rest.Storage.
func (r *VersionedStatusREST) New() runtime.Object { return r.version.New() }

// Destroy implements rest.Storage: the storage is the main resource's.
func (r *VersionedStatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *VersionedStatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.status.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.toServed(obj)
}

// Update implements rest.Updater. Status updates never create objects.
func (r *VersionedStatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, _, err := r.status.Update(ctx, name, r.objectInfo(objInfo), r.validation(createValidation), r.updateValidation(updateValidation), false, options)
	if err != nil {
		return nil, false, err
	}
	served, err := r.toServed(out)
	return served, false, err
}

// NamespaceScoped implements rest.Scoper.
func (r *VersionedStatusREST) NamespaceScoped() bool { return r.status.NamespaceScoped() }

// ConvertToTable implements rest.TableConvertor: as the main resource
// prints.
func (r *VersionedStatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	stored, err := r.toStorage(obj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	return r.status.ConvertToTable(ctx, stored, tableOptions)
}

// GetResetFields implements rest.ResetFieldsStrategy: what the status
// strategy resets.
func (r *VersionedStatusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.status.GetResetFields()
}

// PruneUnknownFields implements rest.UnknownFieldPruner.
func (r *VersionedStatusREST) PruneUnknownFields(obj runtime.Object) ([]string, error) {
	return r.status.PruneUnknownFields(obj)
}

// Structure implements rest.StructureProvider.
func (r *VersionedStatusREST) Structure() *rest.Structure { return r.status.Structure() }

// StorageVersion implements rest.StorageVersionProvider.
func (r *VersionedStatusREST) StorageVersion() schema.GroupVersionKind { return r.storageKind }

// InstallVersion adds main's resource served at v, and its status when
// status is not nil, to resources (one version's part of
// APIGroupInfo.VersionedResourcesStorageMap), under name.
func InstallVersion(resources map[string]rest.Storage, name string, main *Store, status *StatusREST, v Version) error {
	s, err := NewVersionedStore(main, v)
	if err != nil {
		return err
	}
	resources[name] = s
	if status != nil {
		st, err := NewVersionedStatusREST(status, main, v)
		if err != nil {
			return err
		}
		resources[name+"/status"] = st
	}
	return nil
}

// HostsMutation implements rest.MutationHost.
func (r *VersionedStatusREST) HostsMutation() bool { return true }
