package generic

import (
	"context"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// versioner converts between a Version and the kind its Store keeps, at
// the boundary of a verb: what VersionedStore and VersionedStatusREST
// share.
type versioner struct {
	version Version
	// storageKind is the kind the Store keeps.
	storageKind schema.GroupVersionKind
}

// StoredMetadata implements rest.StoredMetadataReader.
func (s versioner) StoredMetadata(obj runtime.Object) (metav1.Object, error) {
	stored, err := s.toStorage(obj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	return meta.Accessor(stored)
}

// Default implements rest.Defaulter: the version's own defaults, as kube's
// decoder applies them to a request at that version. (What storing the
// object adds, autoscaling/v1's CPU target, the field manager sees through
// its convertor; the stored object gets it from the conversion.)
func (s versioner) Default(obj runtime.Object) {
	if s.version.Defaults != nil && reflect.TypeOf(obj) == reflect.TypeOf(s.version.New()) {
		s.version.Defaults(obj)
	}
}

// toStorage converts an object of the served kind to the Store's.
func (s versioner) toStorage(obj runtime.Object) (runtime.Object, error) {
	return s.convert(obj, s.storageKind)
}

// toServed converts an object of the Store's kind to the served one.
func (s versioner) toServed(obj runtime.Object) (runtime.Object, error) {
	return s.convert(obj, s.version.Kind)
}

func (s versioner) convert(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	out, err := s.version.Converter.Convert(obj, to)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return out, nil
}

// validation gives admission the served version of what the Store
// checks (a copy of it: the Store passes copies).
func (s versioner) validation(validate rest.ValidateObjectFunc) rest.ValidateObjectFunc {
	if validate == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		served, err := s.toServed(obj)
		if err != nil {
			return err
		}
		return validate(ctx, served)
	}
}

func (s versioner) updateValidation(validate rest.ValidateObjectUpdateFunc) rest.ValidateObjectUpdateFunc {
	if validate == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		served, err := s.toServed(obj)
		if err != nil {
			return err
		}
		servedOld, err := s.toServed(old)
		if err != nil {
			return err
		}
		return validate(ctx, served, servedOld)
	}
}

// mutation gives the request's mutating admission (nil for none) the
// served version of what the Store admits, and the Store what it made of
// it, if anything.
func (s versioner) mutation(mutate rest.MutateObjectFunc) rest.MutateObjectFunc {
	if mutate == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		served, err := s.toServed(obj)
		if err != nil {
			return err
		}
		if old != nil {
			if old, err = s.toServed(old); err != nil {
				return err
			}
		}
		before := served.DeepCopyObject()
		if err := mutate(ctx, served, old); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(before, served) {
			// Unchanged: the Store's object stays as it is (a round trip
			// through the served version need not give it back exactly).
			return nil
		}
		stored, err := s.toStorage(served)
		if err != nil {
			return err
		}
		if err := rest.ReplaceObject(obj, stored); err != nil {
			return apierrors.NewInternalError(err)
		}
		return nil
	}
}

// objectInfo runs an update's UpdatedObjectInfo, and the mutating
// admission it carries, at the served version.
func (s versioner) objectInfo(inner rest.UpdatedObjectInfo) rest.UpdatedObjectInfo {
	return rest.WithUpdateMutation(&versionedObjectInfo{inner: inner, s: s}, s.mutation(rest.MutationOf(inner)))
}

type versionedObjectInfo struct {
	inner rest.UpdatedObjectInfo
	s     versioner
}

func (i *versionedObjectInfo) Preconditions() *metav1.Preconditions { return i.inner.Preconditions() }

// UpdatedObject converts the current object (a copy: the Store keeps
// using it) to the served version, computes the update there, and
// converts the result back.
func (i *versionedObjectInfo) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	old, err := i.s.toServed(oldObj.DeepCopyObject())
	if err != nil {
		return nil, err
	}
	obj, err := i.inner.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	return i.s.toStorage(obj)
}
