package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// FinishFunc ends what a Begin hook started. success reports that the
// object was written; on false the hook undoes what it reserved.
type FinishFunc func(ctx context.Context, success bool)

// BeginCreateFunc runs on a create after defaulting, before the strategy's
// PrepareForCreate and Validate (the order of kube's Store, where defaults
// come from decoding). It may reserve what the object needs from outside
// the object itself (a service's cluster IP) and change obj accordingly.
type BeginCreateFunc func(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (FinishFunc, error)

// BeginUpdateFunc is BeginCreateFunc for an update of old into obj. It may
// run more than once for one request when the write races with another
// writer: each run's FinishFunc is called before the next run.
type BeginUpdateFunc func(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (FinishFunc, error)

// AfterDeleteFunc runs once an object is gone from storage, exactly once
// per object: only the request whose write removed it calls it (a dry run
// calls it too; options say so).
type AfterDeleteFunc func(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions)

func finishNothing(context.Context, bool) {}

// beginCreate runs the BeginCreate hook, if any.
func (e *Store) beginCreate(ctx context.Context, obj runtime.Object, options *metav1.CreateOptions) (FinishFunc, error) {
	if e.BeginCreate == nil {
		return finishNothing, nil
	}
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	finish, err := e.BeginCreate(ctx, obj, options)
	if err != nil {
		return nil, err
	}
	return finish, nil
}

// beginUpdate runs the BeginUpdate hook, if any.
func (e *Store) beginUpdate(ctx context.Context, obj, old runtime.Object, options *metav1.UpdateOptions) (FinishFunc, error) {
	if e.BeginUpdate == nil {
		return finishNothing, nil
	}
	if options == nil {
		options = &metav1.UpdateOptions{}
	}
	finish, err := e.BeginUpdate(ctx, obj, old, options)
	if err != nil {
		return nil, err
	}
	return finish, nil
}

// afterDelete runs the AfterDelete hook, if any, on an object just deleted.
func (e *Store) afterDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) {
	if e.AfterDelete != nil && obj != nil {
		if options == nil {
			options = &metav1.DeleteOptions{}
		}
		e.AfterDelete(ctx, obj, options)
	}
}

func createOptionsFromUpdate(in *metav1.UpdateOptions) *metav1.CreateOptions {
	return &metav1.CreateOptions{DryRun: in.DryRun, FieldManager: in.FieldManager, FieldValidation: in.FieldValidation}
}

func deleteOptionsFromUpdate(in *metav1.UpdateOptions) *metav1.DeleteOptions {
	return &metav1.DeleteOptions{DryRun: in.DryRun}
}
