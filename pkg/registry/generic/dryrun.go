package generic

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// The storage* helpers run a write for real, or as a dry run: every check
// and every strategy runs, nothing is written, and the result is what would
// have been stored.
//
// A real write records what it stored for out (rest.RecordWritten) when
// the storage can tell: the handler may answer with those bytes.
func (e *Store) storageCreate(ctx context.Context, key string, obj, out runtime.Object, ttl uint64, dryRun bool) error {
	if !dryRun {
		w, ok := e.storage.(storage.ObjectWriter)
		if !ok {
			return e.storage.Create(ctx, key, obj, out, ttl)
		}
		stored, err := w.CreateObject(ctx, key, obj, out, ttl)
		if err == nil {
			rest.RecordWritten(ctx, out, stored)
		}
		return err
	}
	if err := e.storage.Get(ctx, key, storage.GetOptions{}, out); err == nil {
		return storage.NewKeyExistsError(key, 0)
	} else if !storage.IsNotFound(err) {
		return err
	}
	return copyInto(obj, out)
}

func (e *Store) storageUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, dryRun bool) error {
	if !dryRun {
		w, ok := e.storage.(storage.ObjectWriter)
		if !ok {
			return e.storage.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, nil)
		}
		stored, err := w.GuaranteedUpdateObject(ctx, key, dest, ignoreNotFound, preconditions, tryUpdate, nil)
		if err == nil {
			rest.RecordWritten(ctx, dest, stored)
		}
		return err
	}
	existing := e.newFunc()
	if err := e.storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: ignoreNotFound}, existing); err != nil {
		return err
	}
	if err := preconditions.Check(key, existing); err != nil {
		return err
	}
	rev, err := storage.ObjectResourceVersion(existing)
	if err != nil {
		return err
	}
	updated, _, err := tryUpdate(existing, storage.ResponseMeta{ResourceVersion: rev})
	if err != nil {
		return err
	}
	return copyInto(updated, dest)
}

func (e *Store) storageDelete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, dryRun bool) error {
	if !dryRun {
		return e.storage.Delete(ctx, key, out, preconditions, validateDeletion, nil)
	}
	if err := e.storage.Get(ctx, key, storage.GetOptions{}, out); err != nil {
		return err
	}
	if err := preconditions.Check(key, out); err != nil {
		return err
	}
	if validateDeletion != nil {
		return validateDeletion(ctx, out)
	}
	return nil
}

// copyInto copies obj into out, two pointers to the same Go type.
func copyInto(obj, out runtime.Object) error {
	src, dst := reflect.ValueOf(obj.DeepCopyObject()), reflect.ValueOf(out)
	if src.Type() != dst.Type() {
		return fmt.Errorf("generic: cannot copy %T into %T", obj, out)
	}
	dst.Elem().Set(src.Elem())
	return nil
}
