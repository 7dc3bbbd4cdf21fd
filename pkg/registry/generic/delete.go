package generic

import (
	"context"
	"errors"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

var (
	// errDeleteNow: no grace period and no finalizers: delete for real.
	errDeleteNow = errors.New("delete now")
	// errAlreadyDeleting: a graceful deletion is under way already.
	errAlreadyDeleting = errors.New("already deleting")
)

// Delete implements rest.GracefulDeleter. An object with finalizers, or of
// a resource with graceful deletion, first gets a deletionTimestamp and
// stays (deletedImmediately false); otherwise it is removed at once.
func (e *Store) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	} else if w, ok := e.deleteStrategy.(rest.DeleteWarningsStrategy); ok {
		for _, text := range w.WarningsOnDelete(ctx, options) {
			request.AddWarning(ctx, text)
		}
	}
	if deleteValidation == nil {
		deleteValidation = func(context.Context, runtime.Object) error { return nil }
	}
	dryRun := isDryRun(options.DryRun)
	obj := e.newFunc()
	if err := e.storage.Get(ctx, key, storage.GetOptions{}, obj); err != nil {
		return nil, false, interpretDeleteError(err, e.qualifiedResource, name)
	}
	var preconditions storage.Preconditions
	if p := options.Preconditions; p != nil {
		preconditions.UID, preconditions.ResourceVersion = p.UID, p.ResourceVersion
	}
	plan, err := e.beforeDelete(ctx, obj, options)
	if err != nil {
		return nil, false, err
	}
	if plan.pending {
		out, err := e.finalizeDelete(obj)
		return out, false, err
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	var out, lastExisting runtime.Object
	if changeFinalizers, _ := e.gcFinalizers(ctx, m, options); plan.graceful || len(m.GetFinalizers()) > 0 || changeFinalizers || e.preparesDelete(m) {
		var deleteNow bool
		out, lastExisting, deleteNow, err = e.markForDeletion(ctx, name, key, options, &preconditions, deleteValidation, obj)
		if err != nil || !deleteNow {
			return out, false, err
		}
		if preconditions.ResourceVersion != nil && out != nil {
			// The object just changed: the precondition follows it.
			rv := mustAccessor(out).GetResourceVersion()
			preconditions.ResourceVersion = &rv
		}
		if dryRun && out != nil {
			return out, true, nil
		}
	}
	out = e.newFunc()
	if err := e.storageDelete(ctx, key, out, &preconditions, storage.ValidateObjectFunc(deleteValidation), dryRun); err != nil {
		if storage.IsNotFound(err) && lastExisting != nil {
			// Lost a race with another deleter after our own update.
			out, err := e.finalizeDelete(lastExisting)
			return out, true, err
		}
		return nil, false, interpretDeleteError(err, e.qualifiedResource, name)
	}
	e.afterDelete(ctx, out, options)
	result, err := e.finalizeDelete(out)
	return result, true, err
}

// markForDeletion records a deletion that does not happen at once: it sets
// the deletionTimestamp (graceful or finalizers pending) and the
// finalizers of the propagation policy. deleteNow says the object may be
// deleted right away after all.
func (e *Store) markForDeletion(ctx context.Context, name, key string, options *metav1.DeleteOptions,
	preconditions *storage.Preconditions, deleteValidation rest.ValidateObjectFunc, in runtime.Object) (out, lastExisting runtime.Object, deleteNow bool, err error) {
	var lastGrace int64
	var pendingFinalizers bool
	out = e.newFunc()
	err = e.storageUpdate(ctx, key, out, false, preconditions,
		func(existing runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			if err := deleteValidation(ctx, existing); err != nil {
				return nil, nil, err
			}
			// beforeDelete settles the grace period into the options: each
			// attempt starts from the client's, since a first attempt may
			// see a stale cached state (a pod not yet bound, say).
			attempt := options.DeepCopy()
			plan, err := e.beforeDelete(ctx, existing, attempt)
			if err != nil {
				return nil, nil, err
			}
			if plan.pending {
				return nil, nil, errAlreadyDeleting
			}
			m := mustAccessor(existing)
			if change, finalizers := e.gcFinalizers(ctx, m, attempt); change {
				m.SetFinalizers(finalizers)
			}
			prepared := e.preparesDelete(m)
			if prepared {
				e.deleteStrategy.(rest.PrepareForDeleteStrategy).PrepareForDelete(ctx, existing)
			}
			pendingFinalizers = len(m.GetFinalizers()) > 0
			if !plan.graceful {
				if !pendingFinalizers {
					return nil, nil, errDeleteNow
				}
				if !prepared || m.GetDeletionTimestamp() == nil {
					markAsDeleting(m, time.Now())
				}
				return existing, nil, nil
			}
			lastGrace = *attempt.GracePeriodSeconds
			lastExisting = existing
			return existing, nil, nil
		}, isDryRun(options.DryRun))
	switch {
	case err == nil:
		if pendingFinalizers || lastGrace > 0 {
			return out, lastExisting, false, nil
		}
		return out, lastExisting, true, nil
	case errors.Is(err, errDeleteNow):
		return nil, lastExisting, true, nil
	case errors.Is(err, errAlreadyDeleting):
		status, err := e.finalizeDelete(in)
		return status, lastExisting, false, err
	}
	return nil, nil, false, interpretUpdateError(err, e.qualifiedResource, name)
}

// preparesDelete reports that the strategy prepares the deletion of m
// (rest.PrepareForDeleteStrategy), which is not marked deleted yet.
func (e *Store) preparesDelete(m metav1.Object) bool {
	_, ok := e.deleteStrategy.(rest.PrepareForDeleteStrategy)
	return ok && m.GetDeletionTimestamp() == nil
}

// DeleteCollection implements rest.CollectionDeleter: it deletes each
// object the list selects, and returns the list of those deleted.
func (e *Store) DeleteCollection(ctx context.Context, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions,
	listOptions *metainternalversion.ListOptions) (runtime.Object, error) {
	if listOptions == nil {
		listOptions = &metainternalversion.ListOptions{}
	} else {
		listOptions = listOptions.DeepCopy()
	}
	list, err := e.List(ctx, listOptions)
	if err != nil {
		return nil, err
	}
	deleted := make([]runtime.Object, 0, len(list.Items))
	for _, item := range list.Items {
		obj := e.newFunc()
		if err := item.Decode(obj); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		// Each delete gets its own copy: beforeDelete may change options.
		opts := options.DeepCopy()
		if opts == nil {
			opts = &metav1.DeleteOptions{}
		}
		m := mustAccessor(obj)
		// A list across namespaces deletes each object in its own.
		itemCtx := request.WithNamespace(ctx, m.GetNamespace())
		_, _, err := e.Delete(itemCtx, m.GetName(), deleteValidation, opts)
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile by someone else
		}
		if err != nil {
			return nil, err
		}
		// kube answers with the objects as listed, not as deleted.
		deleted = append(deleted, obj)
	}
	result := e.newListFunc()
	if err := meta.SetList(result, deleted); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	lm, err := meta.ListAccessor(result)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if list.ResourceVersion != 0 {
		lm.SetResourceVersion(strconv.FormatInt(list.ResourceVersion, 10))
	}
	lm.SetContinue(list.Continue)
	lm.SetRemainingItemCount(list.RemainingItemCount)
	return result, nil
}

func mustAccessor(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err) // every object the store handles has metadata
	}
	return m
}
