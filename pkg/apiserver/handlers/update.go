package handlers

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Update serves PUT on an object or subresource: 200 with the stored
// object, 201 when the PUT created it.
func (s *Scope) Update(updater rest.Updater) http.HandlerFunc {
	return serveOrError(func(w http.ResponseWriter, r *http.Request) error {
		ctx, ns, name := s.requestContext(r)
		ctx, written := rest.WithWritten(ctx)
		opts := &metav1.UpdateOptions{}
		out, obj, err := s.readWrite(r.WithContext(ctx), opts, "UpdateOptions",
			func() field.ErrorList { return metav1validation.ValidateUpdateOptions(opts) },
			func() string { return opts.FieldValidation })
		if err != nil {
			return err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return badRequest("the object has no metadata: %v", err)
		}
		if m.GetName() != name {
			return badRequest("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name)
		}
		dedupOwnerReferences(ctx, obj, false)
		info := &rest.DefaultUpdatedObjectInfo{Obj: obj, Transformers: []rest.TransformFunc{
			s.updateTracker(managerOrUserAgent(opts.FieldManager, r.UserAgent())),
		}}
		result, code, err := s.update(ctx, updater, ns, name, info, false, opts)
		if err != nil {
			return err
		}
		s.writeWritten(w, r, out, code, result, written)
		return nil
	})
}

// update runs an update (of a PUT or a PATCH) through admission and
// validation, and returns the stored object with the status code that
// answers it: 201 when the update created the object, else 200.
func (s *Scope) update(ctx context.Context, updater rest.Updater, ns, name string, info rest.UpdatedObjectInfo,
	forceAllowCreate bool, opts *metav1.UpdateOptions) (runtime.Object, int, error) {
	admitted := s.mutateUpdate(ns, name, info, opts)
	result, created, err := updater.Update(ctx, name, admitted,
		s.validation(Create, ns, name, opts), s.updateValidation(ns, name, opts), forceAllowCreate, opts)
	if err != nil {
		return nil, 0, err
	}
	if created {
		return result, http.StatusCreated, nil
	}
	return result, http.StatusOK, nil
}
