package handlers

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// managedFields is the field manager of an endpoint, built on first use.
type managedFields struct {
	once    sync.Once
	manager *managedfields.FieldManager
	err     error
}

// fieldManager returns the endpoint's field manager: it records in
// metadata.managedFields who set which field (Update operations for
// creates, updates and patches, Apply for server-side apply), and merges
// apply configurations.
func (s *Scope) fieldManager() (*managedfields.FieldManager, error) {
	s.managed.once.Do(func() {
		s.managed.manager, s.managed.err = fieldmanager.New(s.Kind, s.Subresource, s.Storage)
	})
	if s.managed.err != nil {
		return nil, apierrors.NewInternalError(s.managed.err)
	}
	return s.managed.manager, nil
}

// trackUpdate records in obj's managed fields that manager changed live
// into obj (live is a new object on create). Defaults are applied first,
// as kube's decoder applies them: the manager owns the fields they set.
// A failure leaves live's managed fields in obj, as kube does.
func (s *Scope) trackUpdate(live, obj runtime.Object, manager string) (runtime.Object, error) {
	fieldmanager.Defaulter(s.Storage).Default(obj)
	fm, err := s.fieldManager()
	if err != nil {
		return nil, err
	}
	var out runtime.Object
	runDeep(func() { out = fm.UpdateNoErrors(live, obj, manager) })
	return out, nil
}

// updateTracker is the transformer of a PUT: it sees the current object
// inside the update's retry loop.
func (s *Scope) updateTracker(manager string) rest.TransformFunc {
	return func(_ context.Context, obj, live runtime.Object) (runtime.Object, error) {
		return s.trackUpdate(live, obj, manager)
	}
}

// managerOrUserAgent is the manager of a write: the fieldManager option,
// or the start of the User-Agent ("kubectl", "curl", "Go-http-client").
func managerOrUserAgent(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	return prefixFromUserAgent(userAgent)
}

// prefixFromUserAgent is what precedes the first "/" of u, without
// unprintable characters, cut to the longest valid manager name.
func prefixFromUserAgent(u string) string {
	m, _, _ := strings.Cut(u, "/")
	var buf bytes.Buffer
	for _, r := range m {
		if !unicode.IsPrint(r) {
			continue
		}
		if buf.Len()+utf8.RuneLen(r) > validation.FieldManagerMaxLength {
			break
		}
		buf.WriteRune(r)
	}
	return buf.String()
}
