package handlers

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// MaxRequestBodyBytes is the largest body the server reads (kube's limit:
// 3 MiB); a larger one is refused with 413 without being read whole.
const MaxRequestBodyBytes = 3 * 1024 * 1024

// readBody reads r's body up to MaxRequestBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxRequestBodyBytes {
		return nil, tooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(data) > MaxRequestBodyBytes {
		return nil, tooLarge()
	}
	return data, nil
}

func tooLarge() error {
	return apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxRequestBodyBytes))
}

// Field validation directives (?fieldValidation=).
const (
	fieldValidationIgnore = "Ignore"
	fieldValidationWarn   = "Warn"
	fieldValidationStrict = "Strict"
)

// decodeBody decodes a request body into a new object of the scope's
// kind. Unknown and duplicate fields are errors (Strict), warnings (Warn,
// the default) or nothing (Ignore).
func (s *Scope) decodeBody(r *http.Request, data []byte, fieldValidation string) (runtime.Object, error) {
	info, err := negotiation.Input(r)
	if err != nil {
		return nil, err
	}
	decoder := info.StrictSerializer
	if fieldValidation == fieldValidationIgnore || decoder == nil {
		decoder = info.Serializer
	}
	into := s.Storage.New()
	defaultGVK := s.Kind
	obj, gvk, err := decoder.Decode(data, &defaultGVK, into)
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict || obj == nil {
			return nil, s.decodeError(err, gvk.Kind, gvk.Version, data)
		}
		if fieldValidation == fieldValidationStrict {
			return nil, s.decodeError(err, gvk.Kind, gvk.Version, data)
		}
		for _, e := range strict.Errors() {
			request.AddWarning(r.Context(), e.Error())
		}
	}
	if reflect.TypeOf(obj) != reflect.TypeOf(into) || gvk.GroupVersion() != s.Kind.GroupVersion() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: the kind or version does not match the endpoint (%s)",
			gvk.Kind, gvk.Version, s.Kind.Kind, s.Kind.GroupVersion()))
	}
	return obj, nil
}

// decodeError words a decoding failure as kube does.
func (s *Scope) decodeError(err error, kind, version string, data []byte) error {
	if kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, version, s.Kind.Kind, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)",
		s.Kind.Kind, err, summarizeData(data, 30)))
}

// summarizeData shows the start of a body in an error: as text when it
// looks like JSON, else in hex.
func summarizeData(data []byte, maxLength int) string {
	cut := data
	suffix := ""
	if len(cut) > maxLength {
		cut, suffix = cut[:maxLength], " ..."
	}
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		return string(cut) + suffix
	}
	return hex.EncodeToString(cut) + suffix
}

// fieldValidation returns the directive of a write, "Warn" when unset.
func fieldValidation(r *http.Request) string {
	v := r.URL.Query().Get("fieldValidation")
	if v == "" {
		return fieldValidationWarn
	}
	return v
}
