package generic

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// errEmptiedFinalizers aborts an update that removed the last finalizer of
// an object being deleted: the object is deleted instead.
var errEmptiedFinalizers = errors.New("emptied finalizers")

// Update implements rest.Updater: a read-modify-write that retries on
// races, creating the object when the strategy (or forceAllowCreate, for
// apply) allows it.
func (e *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return e.update(ctx, &e.mainUpdate, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// update is Update through path: the strategy and hooks of the endpoint
// that updates (the resource's own, or a subresource's).
func (e *Store) update(ctx context.Context, path *updatePath, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	var preconditions *storage.Preconditions
	if p := objInfo.Preconditions(); p != nil {
		preconditions = &storage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
	}
	u := &updateAttempt{
		e:                e,
		path:             path,
		name:             name,
		objInfo:          objInfo,
		mutate:           rest.MutationOf(objInfo),
		createValidation: createValidation,
		updateValidation: updateValidation,
		options:          options,
		allowCreate:      path.strategy.AllowCreateOnUpdate() || forceAllowCreate,
		finish:           finishNothing,
	}
	out := e.newFunc()
	err = e.storageUpdate(ctx, key, out, u.allowCreate, preconditions,
		func(existing runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return u.try(ctx, existing, res)
		}, isDryRun(options.DryRun))
	u.finish(ctx, err == nil)
	if err == nil {
		return out, u.creating, nil
	}
	if errors.Is(err, errEmptiedFinalizers) {
		return e.deleteWithoutFinalizers(ctx, name, key, u.deleteObj, preconditions, options)
	}
	var failed *storage.PreconditionError
	if errors.As(err, &failed) {
		// kube's storage words a failed precondition as an invalid
		// object of the key.
		return nil, false, apierrors.NewConflict(e.qualifiedResource, name, fmt.Errorf(
			"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s", key, failed.Msg))
	}
	if u.creating {
		return nil, false, interpretCreateError(err, e.qualifiedResource, name)
	}
	return nil, false, interpretUpdateError(err, e.qualifiedResource, name)
}

// updateAttempt is one Update's inputs and what its latest attempt at the
// read-modify-write left behind.
type updateAttempt struct {
	e                *Store
	path             *updatePath
	name             string
	objInfo          rest.UpdatedObjectInfo
	mutate           rest.MutateObjectFunc
	createValidation rest.ValidateObjectFunc
	updateValidation rest.ValidateObjectUpdateFunc
	options          *metav1.UpdateOptions
	allowCreate      bool

	creating  bool
	deleteObj runtime.Object // the object to delete on errEmptiedFinalizers
	// finish ends the Begin hook of the latest attempt; an attempt
	// that lost a race is undone before the next one begins.
	finish FinishFunc
}

// try is the storage's update function: it computes the new object from
// existing (zero revision: none stored) and its TTL.
func (u *updateAttempt) try(ctx context.Context, existing runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
	u.finish(ctx, false)
	u.finish = finishNothing
	u.creating = false
	existingRV := res.ResourceVersion
	if existingRV == 0 && !u.allowCreate {
		return nil, nil, apierrors.NewNotFound(u.e.qualifiedResource, u.name)
	}
	obj, err := u.objInfo.UpdatedObject(ctx, existing)
	if err != nil {
		return nil, nil, err
	}
	newRV, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if existingRV == 0 {
		u.creating = true
		obj, ttl, f, err := u.e.prepareCreateOnUpdate(ctx, u.path, obj, u.mutate, u.createValidation, u.options)
		u.finish = f
		return obj, ttl, err
	}
	return u.tryUpdate(ctx, obj, existing, newRV, res)
}

// tryUpdate prepares and validates obj as the update of existing, stored
// at res, and chooses its TTL.
func (u *updateAttempt) tryUpdate(ctx context.Context, obj, existing runtime.Object, newRV int64, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
	e, existingRV := u.e, res.ResourceVersion
	if err := e.checkResourceVersion(u.path.strategy, u.name, newRV, existingRV); err != nil {
		return nil, nil, err
	}
	if newRV == 0 {
		// An unconditional update applies to the stored revision
		// (kube sets it, so metadata validation sees one).
		if err := storage.SetResourceVersion(obj, existingRV); err != nil {
			return nil, nil, apierrors.NewInternalError(err)
		}
	}
	finish, err := e.beforeUpdate(ctx, u.path, obj, existing, u.mutate, u.options)
	if err != nil {
		return nil, nil, err
	}
	u.finish = finish
	// The field manager cannot tell an update that changes
	// nothing (once normalised and defaulted) from one that does.
	keepManagedFieldsTimes(obj, existing)
	if u.updateValidation != nil {
		if err := u.updateValidation(ctx, obj.DeepCopyObject(), existing.DeepCopyObject()); err != nil {
			return nil, nil, err
		}
	}
	if shouldDeleteDuringUpdate(u.path.strategy, obj, existing) {
		u.deleteObj = obj
		return nil, nil, errEmptiedFinalizers
	}
	ttl, err := e.ttl(obj, uint64(res.TTL), true)
	if err != nil {
		return nil, nil, err
	}
	if int64(ttl) != res.TTL {
		return obj, &ttl, nil
	}
	return obj, nil, nil
}

// checkResourceVersion enforces optimistic concurrency: an update names
// the revision it was computed from, unless the strategy lets it omit it.
func (e *Store) checkResourceVersion(strategy rest.RESTUpdateStrategy, name string, newRV, existingRV int64) error {
	if newRV == 0 {
		if strategy.AllowUnconditionalUpdate() {
			return nil
		}
		gk := e.groupKind()
		gk.Kind = e.qualifiedResource.Resource // kube names the resource here
		return apierrors.NewInvalid(gk, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata").Child("resourceVersion"), newRV, "must be specified for an update"),
		})
	}
	if newRV != existingRV {
		return apierrors.NewConflict(e.qualifiedResource, name, errors.New(OptimisticLockErrorMsg))
	}
	return nil
}

// prepareCreateOnUpdate runs the create path, with the create hooks of
// path, on the object of a PUT or apply that creates. The FinishFunc
// returned is never nil, whatever the error.
func (e *Store) prepareCreateOnUpdate(ctx context.Context, path *updatePath, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.UpdateOptions) (runtime.Object, *uint64, FinishFunc, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, finishNothing, apierrors.NewInternalError(err)
	}
	wipeSystemFields(m)
	fillSystemFields(m)
	if err := storage.SetResourceVersion(obj, 0); err != nil {
		return nil, nil, finishNothing, err
	}
	finish, err := e.beforeCreate(ctx, path, obj, mutate, createOptionsFromUpdate(options))
	if err != nil {
		return nil, nil, finishNothing, err
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, nil, finish, err
		}
	}
	ttl, err := e.ttl(obj, 0, false)
	if err != nil {
		return nil, nil, finish, err
	}
	return obj, &ttl, finish, nil
}

// shouldDeleteDuringUpdate reports that an update finished a deletion: the
// object was being deleted without a grace period left, and the update
// removed its last finalizer (and the strategy's own finalizers, if it
// has any, are done too).
func shouldDeleteDuringUpdate(strategy rest.RESTUpdateStrategy, obj, existing runtime.Object) bool {
	if p, ok := strategy.(rest.PendingFinalizersStrategy); ok && p.FinalizersPending(obj) {
		return false
	}
	newMeta, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	oldMeta, err := meta.Accessor(existing)
	if err != nil {
		return false
	}
	if len(newMeta.GetFinalizers()) > 0 || oldMeta.GetDeletionTimestamp() == nil {
		return false
	}
	grace := oldMeta.GetDeletionGracePeriodSeconds()
	return grace == nil || *grace == 0
}

// deleteWithoutFinalizers deletes an object whose finalizers an update
// emptied, and returns the updated object (a PUT expects an object back).
func (e *Store) deleteWithoutFinalizers(ctx context.Context, name, key string, obj runtime.Object,
	preconditions *storage.Preconditions, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out := e.newFunc()
	if err := e.storageDelete(ctx, key, out, preconditions, nil, isDryRun(options.DryRun)); err != nil {
		if storage.IsNotFound(err) {
			return obj, false, nil // another update finished the deletion first
		}
		return nil, false, interpretDeleteError(err, e.qualifiedResource, name)
	}
	e.afterDelete(ctx, out, deleteOptionsFromUpdate(options))
	return obj, false, nil
}
