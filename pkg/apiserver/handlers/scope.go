// Package handlers holds the HTTP handlers of the resource verbs: each
// decodes the request, calls the registry verb of the resource's storage,
// and encodes the result, as kube's endpoints/handlers do.
package handlers

import (
	"context"
	"net/http"
	"reflect"
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
// validating admission does. When it is a MutatingAdmission too, its
// Admit runs where the registry takes it (rest.WithMutation).
type Admission interface {
	Validate(ctx context.Context, a Attributes, obj runtime.Object) error
}

// MutatingAdmission may change the object of a write (kube's mutating
// admission webhooks); obj is changed in place. On a delete obj is nil.
type MutatingAdmission interface {
	Admit(ctx context.Context, a Attributes, obj runtime.Object) error
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
	// Kind is the kind of the endpoint's objects.
	Kind      schema.GroupVersionKind
	Namespace string
	Name      string
	// Old is the object an update changes (nil on other operations).
	Old runtime.Object
	// Options are the request's CreateOptions, UpdateOptions,
	// PatchOptions or DeleteOptions; DryRun whether they ask for a dry run.
	Options runtime.Object
	DryRun  bool
	// Default applies the defaults of Kind (to an object a mutating
	// webhook patched, as kube's decoder would); nil when none.
	Default func(runtime.Object)
}

// requestContext returns r's context carrying the namespace of the URL,
// and the namespace and name the route matched.
func (s *Scope) requestContext(r *http.Request) (context.Context, string, string) {
	ns, name := "", chi.URLParam(r, "name")
	if s.Namespaced {
		ns = chi.URLParam(r, "namespace")
	}
	return request.WithNamespace(r.Context(), ns), ns, name
}

// attributes describe op on the endpoint for admission; opts are the
// request's options.
func (s *Scope) attributes(op Operation, ns, name string, opts runtime.Object) Attributes {
	a := Attributes{Operation: op, Resource: s.Resource, Subresource: s.Subresource, Kind: s.Kind,
		Namespace: ns, Name: name, Options: opts}
	switch o := opts.(type) {
	case *metav1.CreateOptions:
		a.DryRun = len(o.DryRun) > 0
	case *metav1.UpdateOptions:
		a.DryRun = len(o.DryRun) > 0
	case *metav1.PatchOptions:
		a.DryRun = len(o.DryRun) > 0
	case *metav1.DeleteOptions:
		a.DryRun = len(o.DryRun) > 0
	}
	if d, ok := s.Storage.(rest.Defaulter); ok {
		a.Default = d.Default
	}
	return a
}

// validation returns the admission check of op as the registry takes it.
func (s *Scope) validation(op Operation, ns, name string, opts runtime.Object) rest.ValidateObjectFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return s.Admission.Validate(ctx, s.objectAttributes(op, ns, name, opts, obj, nil), obj)
	}
}

// updateValidation is the admission check of an update.
func (s *Scope) updateValidation(ns, name string, opts runtime.Object) rest.ValidateObjectUpdateFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		return s.Admission.Validate(ctx, s.objectAttributes(Update, ns, name, opts, obj, old), obj)
	}
}

// objectAttributes are the attributes of op on obj (replacing old): a
// generated name is obj's.
func (s *Scope) objectAttributes(op Operation, ns, name string, opts, obj, old runtime.Object) Attributes {
	if u, ok := opts.(*metav1.UpdateOptions); ok && op == Create {
		// An update that creates is admitted as a create, with kube's
		// create options.
		opts = &metav1.CreateOptions{DryRun: u.DryRun, FieldManager: u.FieldManager, FieldValidation: u.FieldValidation}
	}
	a := s.attributes(op, ns, name, opts)
	a.Old = old
	if name == "" {
		if m, err := meta.Accessor(obj); err == nil {
			a.Name = m.GetName()
		}
	}
	return a
}

// admitDelete runs the mutating admission of a delete (of name, or of a
// collection when name is ""), before the registry's, as kube's handler
// does: there is no object to change, only a request to refuse.
func (s *Scope) admitDelete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) error {
	admit, ok := s.Admission.(MutatingAdmission)
	if !ok {
		return nil
	}
	return admit.Admit(ctx, s.attributes(Delete, ns, name, opts), nil)
}

// withMutation returns ctx carrying the endpoint's mutating admission of
// a create (op Create) or an update (op Update, or Create when the update
// creates), for the registry to run (rest.WithMutation). It admits the
// endpoint's own objects only: where a subresource writes another kind
// (a Scale, a Binding into its Pod) the Store's object is not the one
// admission is about, and is left alone.
func (s *Scope) withMutation(ctx context.Context, ns, name string, opts runtime.Object) context.Context {
	admit, ok := s.Admission.(MutatingAdmission)
	if !ok {
		return ctx
	}
	endpointType := reflect.TypeOf(s.Storage.New())
	return rest.WithMutation(ctx, func(ctx context.Context, obj, old runtime.Object) error {
		if reflect.TypeOf(obj) != endpointType {
			return nil
		}
		op := Update
		if old == nil {
			op = Create
		}
		return admit.Admit(ctx, s.objectAttributes(op, ns, name, opts, obj, old), obj)
	})
}

// mediaTypes is what the endpoint reads and writes.
func (s *Scope) mediaTypes() *negotiation.MediaTypes {
	if s.MediaTypes == nil {
		return negotiation.Builtin
	}
	return s.MediaTypes
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) { return meta.Accessor(obj) }
