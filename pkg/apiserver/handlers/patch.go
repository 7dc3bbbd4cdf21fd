package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// maxJSONPatchOperations bounds a JSON patch, as kube does.
const maxJSONPatchOperations = 10000

// patchTypes are the patch media types served.
var patchTypes = []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType}

// Patch serves PATCH on an object or subresource. The patch is applied to
// the current state inside the update's retry loop, so a patch never loses
// a concurrent write; a resourceVersion inside the patch acts as a
// precondition.
func (s *Scope) Patch(updater rest.Updater) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, ns, name := s.requestContext(r, "patch")
		out, err := negotiation.NegotiateOutput(r, negotiation.TargetTable, negotiation.TargetPartialObjectMetadata)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		patchType, err := patchTypeOf(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		opts := &metav1.PatchOptions{}
		if err := decodeOptions(r, opts, "PatchOptions", func() field.ErrorList {
			return metav1validation.ValidatePatchOptions(opts, patchType)
		}); err != nil {
			WriteError(w, r, err)
			return
		}
		data, err := readBody(r)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		p := &patcher{scope: s, patchType: patchType, patch: data, fieldValidation: opts.FieldValidation, name: name}
		if p.fieldValidation == "" {
			p.fieldValidation = fieldValidationWarn
		}
		updateOpts := &metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
		result, _, err := updater.Update(ctx, name, p, s.validation(Create, ns, name), s.updateValidation(ns, name), false, updateOpts)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		s.writeResult(w, r, out, http.StatusOK, result)
	}
}

func patchTypeOf(r *http.Request) (types.PatchType, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil {
		for _, t := range patchTypes {
			if string(t) == mediaType {
				return t, nil
			}
		}
	}
	supported := make([]string, len(patchTypes))
	for i, t := range patchTypes {
		supported[i] = string(t)
	}
	return "", &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %v", supported),
	}}
}

// patcher is the rest.UpdatedObjectInfo of a PATCH.
type patcher struct {
	scope           *Scope
	patchType       types.PatchType
	patch           []byte
	fieldValidation string
	name            string
}

// Preconditions implements rest.UpdatedObjectInfo: a patch's
// resourceVersion is checked on the patched object by the Store.
func (p *patcher) Preconditions() *metav1.Preconditions { return nil }

// UpdatedObject implements rest.UpdatedObjectInfo.
func (p *patcher) UpdatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	if rv, err := resourceVersionOf(current); err != nil || rv == "" {
		return nil, apierrors.NewNotFound(p.scope.Resource.GroupResource(), p.name)
	}
	current.GetObjectKind().SetGroupVersionKind(p.scope.Kind)
	original, err := json.Marshal(current)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	patched, strictErrs, err := p.apply(original, current)
	if err != nil {
		return nil, err
	}
	obj := p.scope.Storage.New()
	if err := decodeStrict(patched, obj, p.fieldValidation, strictErrs, p.scope.Kind, ctx); err != nil {
		return nil, err
	}
	return obj, nil
}

// apply applies the patch to original (the JSON of current), and returns
// what strict decoding of the patch itself found (unknown and duplicate
// fields).
func (p *patcher) apply(original []byte, current runtime.Object) ([]byte, []error, error) {
	var strictErrs []error
	checkStrict := p.fieldValidation == fieldValidationStrict || p.fieldValidation == fieldValidationWarn
	switch p.patchType {
	case types.JSONPatchType:
		if checkStrict {
			var ops []map[string]interface{}
			errs, err := sigsjson.UnmarshalStrict(p.patch, &ops)
			if err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for _, e := range errs {
				strictErrs = append(strictErrs, fmt.Errorf("json patch %v", e))
			}
		}
		ops, err := jsonpatch.DecodePatch(p.patch)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		if len(ops) > maxJSONPatchOperations {
			return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		patched, err := ops.Apply(original)
		if err != nil {
			return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return patched, strictErrs, nil
	case types.MergePatchType:
		if checkStrict {
			var v map[string]interface{}
			errs, err := sigsjson.UnmarshalStrict(p.patch, &v)
			if err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			strictErrs = errs
		}
		patched, err := jsonpatch.MergePatch(original, p.patch)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, strictErrs, nil
	case types.StrategicMergePatchType:
		var patchMap map[string]interface{}
		errs, err := sigsjson.UnmarshalStrict(p.patch, &patchMap)
		if err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if checkStrict {
			strictErrs = errs
		}
		patched, err := strategicpatch.StrategicMergePatch(original, p.patch, p.scope.Storage.New())
		if err != nil {
			return nil, nil, interpretStrategicMergePatchError(err)
		}
		return patched, strictErrs, nil
	}
	return nil, nil, fmt.Errorf("handlers: unknown patch type %s", p.patchType)
}

// interpretStrategicMergePatchError maps the patch library's errors: a
// malformed patch is 400; one that cannot apply to this object is 422.
func interpretStrategicMergePatchError(err error) error {
	for _, unprocessable := range []error{mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys} {
		if errors.Is(err, unprocessable) {
			return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	}
	return apierrors.NewBadRequest(err.Error())
}

// decodeStrict decodes the patched JSON into obj; unknown fields of the
// result, with those of the patch, are errors or warnings as the field
// validation directive says.
func decodeStrict(data []byte, obj runtime.Object, fieldValidation string, strictErrs []error, gvk schema.GroupVersionKind, ctx context.Context) error {
	errs, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
	}
	if fieldValidation == fieldValidationIgnore {
		return nil
	}
	strictErrs = append(strictErrs, errs...)
	if len(strictErrs) == 0 {
		return nil
	}
	if fieldValidation == fieldValidationStrict {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v",
			gvk.Kind, gvk.Version, gvk.Kind, runtime.NewStrictDecodingError(strictErrs)))
	}
	for _, e := range strictErrs {
		request.AddWarning(ctx, e.Error())
	}
	return nil
}

func resourceVersionOf(obj runtime.Object) (string, error) {
	m, err := metaAccessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetResourceVersion(), nil
}
