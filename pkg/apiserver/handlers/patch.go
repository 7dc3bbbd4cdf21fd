package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

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
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// maxJSONPatchOperations bounds a JSON patch, as kube does.
const maxJSONPatchOperations = 10000

// MaxJSONPatchCopyBytes bounds what the copy operations of one JSON patch
// may add to the document together (kube's JSONPatchMaxCopyBytes): a few
// KiB of patch copying a map into itself doubles it at each copy, and
// without a bound took the server to gigabytes.
const MaxJSONPatchCopyBytes int64 = 3 << 20

// LimitJSONPatchCopies sets the json-patch library's bound on the bytes a
// patch's copies add (MaxJSONPatchCopyBytes). The library keeps it in a
// variable of its own for the whole process, which kube-apiserver sets the
// same way; a lower bound set by someone else in the process is kept.
func LimitJSONPatchCopies() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing <= MaxJSONPatchCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, MaxJSONPatchCopyBytes) {
			return
		}
	}
}

// Patch serves PATCH on an object or subresource. The patch is applied to
// the current state inside the update's retry loop, so a patch never loses
// a concurrent write; a resourceVersion inside the patch acts as a
// precondition (the Store compares it with the stored one). A server-side
// apply (application/apply-patch+yaml) creates the object when it does
// not exist.
func (s *Scope) Patch(updater rest.Updater) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mediaType, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
		if patchTypes := s.mediaTypes().PatchTypes(); !contains(patchTypes, mediaType) {
			WriteError(w, r, unsupportedMediaType(patchTypes))
			return
		}
		patchType := types.PatchType(mediaType)
		ctx, ns, name := s.requestContext(r)
		ctx, written := rest.WithWritten(ctx)
		out, err := s.mediaTypes().Output(r, s.outputTargets(negotiation.TargetPartialObjectMetadata)...)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		data, err := readBody(r)
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
		if err := validatePatch(data, patchType); err != nil {
			WriteError(w, r, err)
			return
		}
		audit.LogRequestPatch(ctx, data)
		p := &patcher{scope: s, patchType: patchType, patch: data, fieldValidation: opts.FieldValidation, name: name, namespace: ns,
			manager: managerOrUserAgent(opts.FieldManager, r.UserAgent()), force: opts.Force != nil && *opts.Force}
		if p.fieldValidation == "" {
			p.fieldValidation = fieldValidationWarn
		}
		apply := patchType == types.ApplyYAMLPatchType
		updateOpts := &metav1.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
		result, code, err := s.update(ctx, updater, ns, name, p, apply, updateOpts)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		s.writeWritten(w, r, out, code, result, written)
	}
}

// validatePatch refuses, with kube's messages, a body that is not JSON
// (YAML for an apply).
func validatePatch(data []byte, patchType types.PatchType) error {
	if patchType == types.ApplyYAMLPatchType {
		if _, err := yaml.ToJSON(data); err != nil {
			return badRequest("error encoding patch: %v", err)
		}
		return nil
	}
	if !json.Valid(data) {
		return apierrors.NewBadRequest("invalid JSON patch")
	}
	return nil
}

// unsupportedMediaType is kube's handler-level 415 (no details).
func unsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// patcher is the rest.UpdatedObjectInfo of a PATCH.
type patcher struct {
	scope           *Scope
	patchType       types.PatchType
	patch           []byte
	fieldValidation string
	name, namespace string
	// manager is the field manager of the write; force takes the fields
	// an apply sets from the managers that own them.
	manager string
	force   bool
}

// Preconditions implements rest.UpdatedObjectInfo: a patch's
// resourceVersion is checked on the patched object by the Store.
func (p *patcher) Preconditions() *metav1.Preconditions { return nil }

// UpdatedObject implements rest.UpdatedObjectInfo: the patch applied to
// current, which must exist unless the patch is an apply.
func (p *patcher) UpdatedObject(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	m, err := metaAccessor(current)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	exists := m.GetUID() != ""
	var obj runtime.Object
	switch {
	case p.patchType == types.ApplyYAMLPatchType:
		if !exists {
			current = p.scope.Storage.New()
		}
		obj, err = p.applyConfiguration(ctx, current)
	case !exists:
		return nil, apierrors.NewNotFound(p.scope.Resource.GroupResource(), p.name)
	default:
		obj, err = p.applyPatch(ctx, current)
	}
	if err != nil {
		return nil, err
	}
	patched, err := metaAccessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if !exists && patched.GetUID() != "" {
		return nil, apierrors.NewConflict(p.scope.Resource.GroupResource(), p.name,
			fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", patched.GetUID()))
	}
	// The namespace first, then the name, as kube checks them.
	if err := p.ensureNamespace(patched); err != nil {
		return nil, err
	}
	switch patched.GetName() {
	case p.name:
	case "":
		return nil, badRequest("the name of the object (%s based on URL) was undeterminable: name must be provided", p.name)
	default:
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", patched.GetName(), p.name)
	}
	dedupOwnerReferences(ctx, obj, true)
	return obj, nil
}

// ensureNamespace gives the patched object the namespace of the request
// when it names none (and none when the resource is cluster-scoped), and
// refuses another one.
func (p *patcher) ensureNamespace(m metav1.Object) error {
	want := p.namespace
	if !p.scope.Namespaced {
		want = ""
	}
	switch ns := m.GetNamespace(); {
	case ns == want:
	case ns == "":
		m.SetNamespace(want)
	case want == "":
		m.SetNamespace("")
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// applyPatch applies a JSON, merge or strategic merge patch to current
// and records the change in the managed fields.
func (p *patcher) applyPatch(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	current.GetObjectKind().SetGroupVersionKind(p.scope.Kind)
	var obj runtime.Object
	var err error
	if p.patchType == types.StrategicMergePatchType {
		obj, err = p.applyStrategic(ctx, current)
	} else {
		obj, err = p.applyJSON(ctx, current)
	}
	if err != nil {
		return nil, err
	}
	return p.scope.trackUpdate(current, obj, p.manager)
}

// applyJSON applies a JSON patch or a JSON merge patch to the JSON of
// current and decodes the result, as kube's jsonPatcher.
func (p *patcher) applyJSON(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	original, err := json.Marshal(current)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	patched, strictErrs, err := p.applyJSPatch(original)
	if err != nil {
		return nil, err
	}
	info, _ := negotiation.Serializer(negotiation.MediaTypeJSON)
	decoder := info.Serializer
	if p.checksFields() {
		decoder = info.StrictSerializer
	}
	obj := p.scope.Storage.New()
	kind := p.scope.Kind
	_, _, err = decoder.Decode(patched, &kind, obj)
	var decodeErrs []error
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, invalidPatch(string(patched), err)
		}
		decodeErrs = strict.Errors()
	}
	unknown, err := p.scope.pruneUnknownFields(obj)
	if err != nil {
		return nil, invalidPatch(string(patched), err)
	}
	return obj, p.strictDecodingResult(ctx, string(patched), append(append(strictErrs, decodeErrs...), unknown...))
}

// jsonPatchOp is one operation of a JSON patch, for strict decoding (the
// type's name shows in kube's error messages).
type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

// checkRootValues refuses a replace or test of the whole document without
// a value, which json-patch (and so kube-apiserver 1.37, which resets the
// stream) panics on; elsewhere a missing value is null, as in kube.
func checkRootValues(ops jsonpatch.Patch) error {
	for _, op := range ops {
		kind := op.Kind()
		if kind != "replace" && kind != "test" {
			continue
		}
		if path, err := op.Path(); err != nil || path != "" {
			continue
		}
		if _, ok := op["value"]; !ok {
			return fmt.Errorf("%s operation on the whole document: missing value", kind)
		}
	}
	return nil
}

// applyJSPatch applies the patch to original, and returns what strict
// decoding of the patch itself found (unknown and duplicate fields).
func (p *patcher) applyJSPatch(original []byte) ([]byte, []error, error) {
	var strictErrs []error
	switch p.patchType {
	case types.JSONPatchType:
		if p.checksFields() {
			var ops []jsonPatchOp
			errs, err := sigsjson.UnmarshalStrict(p.patch, &ops)
			if err != nil {
				return nil, nil, badRequest("error decoding patch: %v", err)
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
		if err := checkRootValues(ops); err != nil {
			return nil, nil, unprocessable(err)
		}
		patched, err := ops.Apply(original)
		if err != nil {
			return nil, nil, unprocessable(err)
		}
		return patched, strictErrs, nil
	default: // types.MergePatchType
		if p.checksFields() {
			v := map[string]interface{}{}
			errs, err := sigsjson.UnmarshalStrict(p.patch, &v)
			if err != nil {
				return nil, nil, badRequest("error decoding patch: %v", err)
			}
			strictErrs = errs
		}
		patched, err := jsonpatch.MergePatch(original, p.patch)
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return nil, nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, strictErrs, err
	}
}

// applyStrategic applies a strategic merge patch to current, as kube's
// smpPatcher: on maps, with the Go type as the merge schema.
func (p *patcher) applyStrategic(ctx context.Context, current runtime.Object) (runtime.Object, error) {
	originalMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	patchMap := map[string]interface{}{}
	var strictErrs []error
	if p.checksFields() {
		strictErrs, err = sigsjson.UnmarshalStrict(p.patch, &patchMap)
	} else {
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(p.patch, &patchMap)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	patchedMap, err := strategicpatch.StrategicMergeMapPatch(originalMap, patchMap, p.scope.Storage.New())
	if err != nil {
		return nil, interpretStrategicMergePatchError(err)
	}
	obj := p.scope.Storage.New()
	shown := fmt.Sprintf("%+v", patchMap)
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patchedMap, obj, p.checksFields())
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict {
			return nil, invalidPatch(shown, err)
		}
		strictErrs = append(strictErrs, strict.Errors()...)
	}
	obj.GetObjectKind().SetGroupVersionKind(p.scope.Kind)
	return obj, p.strictDecodingResult(ctx, shown, strictErrs)
}

// checksFields tells whether unknown and duplicate fields are looked for.
func (p *patcher) checksFields() bool {
	return p.fieldValidation == fieldValidationStrict || p.fieldValidation == fieldValidationWarn
}

// strictDecodingResult turns the unknown and duplicate fields found into
// warnings (Warn) or a 422 naming the patched document (Strict).
func (p *patcher) strictDecodingResult(ctx context.Context, shown string, errs []error) error {
	if len(errs) == 0 || p.fieldValidation == fieldValidationIgnore {
		return nil
	}
	if p.fieldValidation == fieldValidationWarn {
		for _, e := range errs {
			request.AddWarning(ctx, e.Error())
		}
		return nil
	}
	return invalidPatch(shown, runtime.NewStrictDecodingError(errs))
}

// invalidPatch is kube's 422 for a patch whose result is not a valid
// object of the kind.
func invalidPatch(shown string, err error) error {
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), shown, err.Error())})
}

func unprocessable(err error) error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
}

// interpretStrategicMergePatchError maps the patch library's errors as
// kube does: a malformed patch is 400; one that cannot apply to this
// object is 422; anything else is the server's (500).
func interpretStrategicMergePatchError(err error) error {
	for _, bad := range []error{mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat} {
		if err == bad { //nolint:errorlint // kube compares the sentinels themselves
			return apierrors.NewBadRequest(err.Error())
		}
	}
	if err == mergepatch.ErrNoListOfLists || err == mergepatch.ErrPatchContentNotMatchRetainKeys { //nolint:errorlint // as above
		return unprocessable(err)
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
