package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// StatusREST serves a "/status" subresource: GET reads the object, PUT and
// PATCH change only its status (the strategy keeps the rest).
type StatusREST struct {
	store *Store
}

var (
	_ rest.Getter  = (*StatusREST)(nil)
	_ rest.Updater = (*StatusREST)(nil)
)

// NewStatusREST returns the status subresource of main, sharing its storage.
func NewStatusREST(main *Store, strategy rest.RESTUpdateStrategy) *StatusREST {
	s := *main
	s.UpdateStrategy = strategy
	// A status update leaves the spec alone: the main resource's
	// reservations (BeginCreate, BeginUpdate) do not apply. Deletions
	// finished by a status update (its last finalizer removed) still
	// release them (AfterDelete).
	s.BeginCreate, s.BeginUpdate = nil, nil
	return &StatusREST{store: &s}
}

// New implements rest.Storage.
func (r *StatusREST) New() runtime.Object { return r.store.NewFunc() }

// Destroy implements rest.Storage: the storage belongs to the main
// resource, which destroys it.
func (r *StatusREST) Destroy() {}

// Get implements rest.Getter.
func (r *StatusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update implements rest.Updater. Status updates never create objects.
func (r *StatusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// NamespaceScoped implements rest.Scoper.
func (r *StatusREST) NamespaceScoped() bool { return r.store.NamespaceScoped() }

// ConvertToTable implements rest.TableConvertor.
func (r *StatusREST) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, tableOptions)
}
