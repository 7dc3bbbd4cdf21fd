package handlers

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Create serves POST on a collection (and on subresources that create,
// such as pods/binding).
func (s *Scope) Create(creater rest.Creater) http.HandlerFunc {
	return serveOrError(func(w http.ResponseWriter, r *http.Request) error {
		ctx, ns, name := s.requestContext(r)
		ctx, written := rest.WithWritten(ctx)
		opts := &metav1.CreateOptions{}
		out, obj, err := s.readWrite(r.WithContext(ctx), opts, "CreateOptions",
			func() field.ErrorList { return metav1validation.ValidateCreateOptions(opts) },
			func() string { return opts.FieldValidation })
		if err != nil {
			return err
		}
		dedupOwnerReferences(ctx, obj, false)
		obj, err = s.trackUpdate(s.Storage.New(), obj, managerOrUserAgent(opts.FieldManager, r.UserAgent()))
		if err != nil {
			return err
		}
		mutate, err := s.mutateCreate(ctx, creater, ns, name, obj, opts)
		if err != nil {
			return err
		}
		result, err := create(ctx, creater, obj, mutate, s.validation(Create, ns, name, opts), opts)
		if err != nil {
			return err
		}
		code := http.StatusCreated
		if status, ok := result.(*metav1.Status); ok && status.Code != 0 {
			code = int(status.Code)
		}
		s.writeWritten(w, r, out, code, result, written)
		return nil
	})
}

// readWrite reads what a create or an update sends, in kube's order: the
// representation of the answer, the body's media type, the body, the
// options (into opts, validated), then the body's object; the first
// failure is the error to answer with.
func (s *Scope) readWrite(r *http.Request, opts runtime.Object, optionsKind string,
	validate func() field.ErrorList, fieldValidation func() string) (negotiation.Output, runtime.Object, error) {
	out, err := s.mediaTypes().Output(r, s.outputTargets(negotiation.TargetPartialObjectMetadata)...)
	if err == nil {
		_, err = s.mediaTypes().Input(r)
	}
	var data []byte
	if err == nil {
		data, err = readBody(r)
	}
	if err == nil {
		err = decodeOptions(r, opts, optionsKind, validate)
	}
	var obj runtime.Object
	if err == nil {
		obj, err = s.decodeBody(r, data, fieldValidation())
	}
	return out, obj, err
}

// decodeOptions reads the query parameters of a write into opts (a
// metav1.*Options) and validates them; failures are 422 Invalid on the
// options kind, as kube reports them.
func decodeOptions(r *http.Request, opts runtime.Object, kind string, validate func() field.ErrorList) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if errs := validate(); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return nil
}
