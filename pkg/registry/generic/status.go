package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// StatusREST serves a subresource that updates the resource's objects
// with a strategy of its own: "/status" (PUT and PATCH change only the
// status; the strategy keeps the rest), and the like (namespaces/finalize).
// GET reads the object. It shares the main Store by pointer: no Begin
// hooks run (the spec does not change here), AfterDelete does (removing
// the last finalizer here deletes the object).
type StatusREST struct {
	store  *Store
	update updatePath
}

var (
	_ rest.Getter  = (*StatusREST)(nil)
	_ rest.Updater = (*StatusREST)(nil)
)

// NewStatusREST returns the subresource of main that updates with
// strategy.
func NewStatusREST(main *Store, strategy rest.RESTUpdateStrategy) *StatusREST {
	return &StatusREST{store: main, update: subresourcePath(strategy)}
}

// UpdateSubresource builds, for Resource.Subresources, a subresource that
// reads the object and updates it with strategy, as /status does
// (kube's pods/resize, certificatesigningrequests/approval...).
func UpdateSubresource(strategy rest.RESTUpdateStrategy) SubresourceFunc {
	return func(main *Store) (rest.Storage, error) { return NewStatusREST(main, strategy), nil }
}

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.newFunc() }

// Destroy implements rest.Storage: the storage belongs to the main
// resource, which destroys it.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater. It creates no object unless the
// strategy allows it (forceAllowCreate, for apply, is ignored).
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.update(ctx, &r.update, name, objInfo, createValidation, updateValidation, false, options)
}

// NamespaceScoped implements rest.Scoper.
func (r *StatusREST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, tableOptions)
}

// HostsMutation implements rest.MutationHost (the Store runs it).
func (r *StatusREST) HostsMutation() bool { return true }
