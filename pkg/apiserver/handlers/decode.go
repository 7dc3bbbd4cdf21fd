package handlers

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/api"
	"github.com/miniapiserver/miniapiserver/pkg/apiserver/audit"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// MaxRequestBodyBytes is the largest body the server reads (kube's limit:
// 3 MiB); a larger one is refused with 413.
const MaxRequestBodyBytes = 3 * 1024 * 1024

// maxDiscardBytes bounds how much of a refused body the server reads and
// drops before answering 413. A client sending its whole body before it
// reads (curl, most clients but Go's) would otherwise still be writing
// when the server closes the connection, and get a reset instead of the
// Status; past this bound the connection is closed as it is.
const maxDiscardBytes = 4 * MaxRequestBodyBytes

// readBody reads r's body up to MaxRequestBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxRequestBodyBytes {
		if r.ContentLength <= MaxRequestBodyBytes+maxDiscardBytes {
			discardBody(r.Body)
		}
		return nil, tooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(data) > MaxRequestBodyBytes {
		discardBody(r.Body)
		return nil, tooLarge()
	}
	return data, nil
}

// discardBody reads and drops what is left of a refused body, up to
// maxDiscardBytes, so that its sender finishes and reads the answer.
func discardBody(body io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDiscardBytes))
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
// the default) or nothing (Ignore). The object of a kind with a schema
// (custom resources) loses the fields the schema does not declare, which
// count as unknown, as kube's decoder of custom resources has it.
func (s *Scope) decodeBody(r *http.Request, data []byte, fieldValidation string) (runtime.Object, error) {
	info, err := s.mediaTypes().Input(r)
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
	var strictErrs []error
	if err != nil {
		strict, isStrict := runtime.AsStrictDecodingError(err)
		if !isStrict || obj == nil {
			return nil, s.decodeError(err, gvk, data)
		}
		strictErrs = strict.Errors()
	}
	if reflect.TypeOf(obj) != reflect.TypeOf(into) {
		converted, ok := s.acceptedConversion(obj, gvk)
		if !ok {
			// kube decodes into its internal type: another kind fails to
			// convert, and says so in these words.
			return nil, s.decodeError(fmt.Errorf("converting (%s) to (%s): unknown conversion",
				reflect.TypeOf(obj).Elem(), internalTypeName(s.Kind)), gvk, data)
		}
		obj = converted
	}
	if _, ok := s.Storage.(rest.UnknownFieldPruner); ok {
		if gv := gvk.GroupVersion(); gv != s.Kind.GroupVersion() {
			return nil, badRequest("the API version in the data (%s) does not match the expected API version (%v)", gv, s.Kind.GroupVersion())
		}
	}
	unknown, err := s.pruneUnknownFields(obj)
	if err != nil {
		return nil, s.decodeError(err, gvk, data)
	}
	strictErrs = append(strictErrs, unknown...)
	if len(strictErrs) > 0 && fieldValidation != fieldValidationIgnore {
		if fieldValidation == fieldValidationStrict {
			return nil, s.decodeError(runtime.NewStrictDecodingError(strictErrs), gvk, data)
		}
		for _, e := range strictErrs {
			request.AddWarning(r.Context(), e.Error())
		}
	}
	audit.LogRequestObject(r.Context(), obj, s.Kind)
	return obj, nil
}

// pruneUnknownFields drops from obj, of a kind with a schema, the fields
// the schema does not declare, and returns them as the errors of strict
// decoding.
func (s *Scope) pruneUnknownFields(obj runtime.Object) ([]error, error) {
	pruner, ok := s.Storage.(rest.UnknownFieldPruner)
	if !ok {
		return nil, nil
	}
	unknown, err := pruner.PruneUnknownFields(obj)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(unknown))
	for i, f := range unknown {
		errs[i] = fmt.Errorf("unknown field %q", f)
	}
	return errs, nil
}

// acceptedConversion converts obj, of another kind than the scope's, into
// the storage's kind, when the storage accepts obj's group version.
func (s *Scope) acceptedConversion(obj runtime.Object, gvk *schema.GroupVersionKind) (runtime.Object, bool) {
	acceptor, ok := s.Storage.(rest.GroupVersionAcceptor)
	if !ok || gvk == nil || gvk.Kind != s.Kind.Kind || !acceptor.AcceptsGroupVersion(gvk.GroupVersion()) {
		return nil, false
	}
	out := s.Storage.New()
	if err := api.Scheme().Convert(obj, out, nil); err != nil {
		return nil, false
	}
	return out, true
}

// internalTypeName is the name kube's internal type of a kind prints
// with: the package is the group's first label ("core" for the core group).
func internalTypeName(gvk schema.GroupVersionKind) string {
	pkg, _, _ := strings.Cut(gvk.Group, ".")
	if pkg == "" {
		pkg = "core"
	}
	return pkg + "." + gvk.Kind
}

// decodeError words a decoding failure as kube does: naming the kind the
// body claims, when it got that far.
func (s *Scope) decodeError(err error, gvk *schema.GroupVersionKind, data []byte) error {
	if gvk != nil && gvk.Kind != "" {
		return badRequest("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, s.Kind.Kind, err)
	}
	return badRequest("the object provided is unrecognized (must be of type %s): %v (%s)", s.Kind.Kind, err, summarizeData(data, 30))
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
