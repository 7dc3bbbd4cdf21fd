// Package handlers holds the HTTP handlers of the resource verbs: each
// decodes the request, calls the registry verb of the resource's storage,
// and encodes the result, as kube's endpoints/handlers do.
package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/negotiation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Scope is what the handlers of one endpoint (a resource or subresource of
// a group version) know about it.
type Scope struct {
	Resource    schema.GroupVersionResource
	Subresource string
	// Kind is the kind of the objects the endpoint reads and writes.
	Kind       schema.GroupVersionKind
	Namespaced bool
	Storage    rest.Storage
	// Admission checks creates, updates and deletes (NamespaceLifecycle,
	// ...); nil admits everything.
	Admission Admission
	// MinRequestTimeout is the base of a watch's random timeout when the
	// client sets none (kube's --min-request-timeout).
	MinRequestTimeout time.Duration
	// MediaTypes are what the endpoint reads and writes (nil:
	// negotiation.Builtin).
	MediaTypes *negotiation.MediaTypes

	// managed is the endpoint's field manager, built on the first write.
	managed managedFields
}

// Admission is the validating admission chain as the handlers see it: it
// runs on the fully formed object, inside the registry verb, as kube's
// validating admission does.
type Admission interface {
	Validate(ctx context.Context, a Attributes, obj runtime.Object) error
}

// Operation is what a request does, for admission.
type Operation string

// The admitted operations.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// Attributes describe a request to admission.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Old is the object an update changes (nil on other operations).
	Old runtime.Object
}

// requestContext returns r's context carrying the namespace of the URL and
// what the request addresses.
func (s *Scope) requestContext(r *http.Request, verb string) (context.Context, string, string) {
	ns, name := "", chi.URLParam(r, "name")
	if s.Namespaced {
		ns = chi.URLParam(r, "namespace")
	}
	ctx := request.WithNamespace(r.Context(), ns)
	info, ok := request.InfoFrom(ctx)
	if ok {
		info.Verb, info.Namespace, info.Name = verb, ns, name
	}
	return ctx, ns, name
}

// validation returns the admission check of op as the registry takes it.
func (s *Scope) validation(op Operation, ns, name string) rest.ValidateObjectFunc {
	return s.validationOf(op, ns, name, nil)
}

// validationOf is validation with the old object of an update.
func (s *Scope) validationOf(op Operation, ns, name string, old runtime.Object) rest.ValidateObjectFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		attrs := Attributes{Operation: op, Resource: s.Resource, Subresource: s.Subresource, Namespace: ns, Name: name, Old: old}
		if name == "" {
			if m, err := meta.Accessor(obj); err == nil {
				attrs.Name = m.GetName() // a generated name
			}
		}
		return s.Admission.Validate(ctx, attrs, obj)
	}
}

// updateValidation is the admission check of an update.
func (s *Scope) updateValidation(ns, name string) rest.ValidateObjectUpdateFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		return s.validationOf(Update, ns, name, old)(ctx, obj)
	}
}

// mediaTypes is what the endpoint reads and writes.
func (s *Scope) mediaTypes() *negotiation.MediaTypes {
	if s.MediaTypes == nil {
		return negotiation.Builtin
	}
	return s.MediaTypes
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) { return meta.Accessor(obj) }
