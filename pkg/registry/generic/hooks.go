package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Hooks let a resource act around its writes beyond what its strategy
// does to the object alone: read other resources as kube's built-in
// mutating admission does (the LimitRange defaults and the service
// account of a new pod), or reserve and release what its objects hold
// outside their own key (a service's cluster IP and node ports). Any may
// be nil.
//
// As in kube, the Begin hooks run on the resource's own endpoint only (and
// its scale subresource, which writes through it): a status update leaves
// the spec alone, so it reserves nothing. AfterDelete runs whichever
// endpoint removes the object, a status update that drops the last
// finalizer included.
type Hooks struct {
	AdmitCreate AdmitCreateFunc
	BeginCreate BeginCreateFunc
	BeginUpdate BeginUpdateFunc
	AfterDelete AfterDeleteFunc
}

// AdmitCreateFunc is a resource's part of kube's built-in mutating
// admission of a new object: it runs after defaulting, before
// BeginCreate, and may change obj but holds nothing, so that it can run
// again: as kube runs its built-in plugins again once a mutating webhook
// or policy changed the object, the Store runs it again when the
// request's mutating admission changed obj. An error refuses the create.
type AdmitCreateFunc func(ctx context.Context, obj runtime.Object) error

// FinishFunc ends what a Begin hook started. success reports that the
// object was written; on false the hook undoes what it reserved.
type FinishFunc func(ctx context.Context, success bool)

// BeginCreateFunc runs on a create after defaulting, before the strategy's
// PrepareForCreate and Validate (the order of kube's Store, where defaults
// come from decoding). It may reserve what the object needs from outside
// the object itself (a service's cluster IP) and change obj accordingly.
// options is never nil.
type BeginCreateFunc func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (FinishFunc, error)

// BeginUpdateFunc is BeginCreateFunc for an update of old into obj. It may
// run more than once for one request when the write races with another
// writer: each run's FinishFunc is called before the next run.
type BeginUpdateFunc func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (FinishFunc, error)

// AfterDeleteFunc runs once an object is gone from storage, exactly once
// per object: only the request whose write removed it calls it (a dry run
// calls it too; options say so, and are never nil).
type AfterDeleteFunc func(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions)

func finishNothing(context.Context, bool) {}

// updatePath is how one endpoint updates the Store's objects: the
// resource's own endpoint with its strategy and Begin hooks, a
// subresource (/status) with a strategy of its own and no Begin hooks.
// Each endpoint keeps its path; all share the one Store by pointer.
type updatePath struct {
	strategy rest.RESTUpdateStrategy
	// admitCreate and beginCreate run when an update creates the object
	// (PUT or apply of a missing object, where the strategy allows it).
	admitCreate AdmitCreateFunc
	beginCreate BeginCreateFunc
	beginUpdate BeginUpdateFunc
}

// subresourcePath is the update path of a subresource served with
// strategy: no Begin hooks.
func subresourcePath(strategy rest.RESTUpdateStrategy) updatePath {
	return updatePath{strategy: strategy}
}

// runBeginCreate runs begin, if any.
func runBeginCreate(ctx context.Context, begin BeginCreateFunc, obj runtime.Object, options *metav1.CreateOptions) (FinishFunc, error) {
	if begin == nil {
		return finishNothing, nil
	}
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	return begin(ctx, obj, options)
}

// runBeginUpdate runs the path's BeginUpdate hook, if any.
func (p *updatePath) runBeginUpdate(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (FinishFunc, error) {
	if p.beginUpdate == nil {
		return finishNothing, nil
	}
	if options == nil {
		options = &metav1.UpdateOptions{}
	}
	return p.beginUpdate(ctx, obj, old, options)
}

// afterDelete runs the AfterDelete hook, if any, on an object just deleted.
func (e *Store) afterDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) {
	if e.afterDeleteFunc != nil && obj != nil {
		if options == nil {
			options = &metav1.DeleteOptions{}
		}
		e.afterDeleteFunc(ctx, obj, options)
	}
}

func createOptionsFromUpdate(in *metav1.UpdateOptions) *metav1.CreateOptions {
	return &metav1.CreateOptions{DryRun: in.DryRun, FieldManager: in.FieldManager, FieldValidation: in.FieldValidation}
}

func deleteOptionsFromUpdate(in *metav1.UpdateOptions) *metav1.DeleteOptions {
	return &metav1.DeleteOptions{DryRun: in.DryRun}
}
