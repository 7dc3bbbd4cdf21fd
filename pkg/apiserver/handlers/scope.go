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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// client sets none (kube's --min-request-timeout); 0: 30 min, kube's
	// default; negative: no timeout (kube's --min-request-timeout=0).
	MinRequestTimeout time.Duration
	// MediaTypes are what the endpoint reads and writes (nil:
	// negotiation.Builtin).
	MediaTypes *negotiation.MediaTypes
	// Metrics are the server's handler metrics (nil: recorded nowhere
	// read).
	Metrics *Metrics

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
	// Connect is a connect subresource's request (pods/exec, services/proxy,
	// ...): its object is the request's options.
	Connect Operation = "CONNECT"
)

// Attributes describe a request to admission.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
	// Kind is the kind of the endpoint's objects.
	Kind schema.GroupVersionKind
	// Old is the object an update changes (nil on other operations).
	Old runtime.Object
	// Options are the request's options (*metav1.CreateOptions,
	// UpdateOptions or DeleteOptions, with their kind), and DryRun
	// whether they ask for a dry run.
	Options runtime.Object
	DryRun  bool
	// Default applies the defaults of Kind (to an object a mutating
	// webhook patched, as kube's decoder would); nil when none.
	Default func(runtime.Object)
	// Structure is that of Kind when its Go type does not give it (a
	// custom resource's schema), for what merges apply configurations.
	Structure *rest.Structure
}

// Forbidden is kube's admission.NewForbidden, how admission plugins
// refuse: a Forbidden error on the request's resource (without its
// subresource) naming what the request names, or when it names nothing
// obj: by its name, else its generateName (mutating admission runs before
// the name is generated), else "Unknown" (a collection's delete);
// "Unknown/errorGettingName" for an obj without metadata. A Forbidden
// err is returned as it is, not wrapped twice.
func (a Attributes) Forbidden(obj runtime.Object, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	name := a.Name
	if name == "" && obj == nil {
		name = "Unknown"
	} else if name == "" {
		m, merr := meta.Accessor(obj)
		switch {
		case merr != nil:
			name = "Unknown/errorGettingName"
		case m.GetName() != "":
			name = m.GetName()
		case m.GetGenerateName() != "":
			name = m.GetGenerateName()
		default:
			name = "Unknown"
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
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

// validation returns the admission check of op as the registry takes it;
// opts are the request's options (see Attributes.Options).
func (s *Scope) validation(op Operation, ns, name string, opts runtime.Object) rest.ValidateObjectFunc {
	return s.validationOf(op, ns, name, nil, opts)
}

// validationOf is validation with the old object of an update.
func (s *Scope) validationOf(op Operation, ns, name string, old, opts runtime.Object) rest.ValidateObjectFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error {
		return s.Admission.Validate(ctx, s.attributes(op, ns, name, obj, old, opts), obj)
	}
}

// attributes describe a request on obj to admission.
func (s *Scope) attributes(op Operation, ns, name string, obj, old, opts runtime.Object) Attributes {
	opts, dryRun := admissionOptions(op, opts)
	attrs := Attributes{Operation: op, Resource: s.Resource, Subresource: s.Subresource, Namespace: ns, Name: name,
		Kind: s.Kind, Old: old, Options: opts, DryRun: dryRun}
	if d, ok := s.Storage.(rest.Defaulter); ok {
		attrs.Default = d.Default
	}
	if p, ok := s.Storage.(rest.StructureProvider); ok {
		attrs.Structure = p.Structure()
	}
	if name == "" && obj != nil {
		if m, err := meta.Accessor(obj); err == nil {
			attrs.Name = m.GetName() // a generated name
		}
	}
	return attrs
}

// ConnectAdmission is implemented by admission chains that check connect
// requests, as kube's plugins that handle CONNECT do: obj is the
// request's options (a PodExecOptions, say).
type ConnectAdmission interface {
	ValidateConnect(ctx context.Context, a Attributes, obj runtime.Object) error
}

// MutatingConnectAdmission is implemented by admission chains whose
// mutating steps handle connect requests, as kube's connect handler calls
// its chain's Admit before Validate: AdmitConnect may change obj, the
// request's options, in place, and the storage connects with what it
// became.
type MutatingConnectAdmission interface {
	AdmitConnect(ctx context.Context, a Attributes, obj runtime.Object) error
}

// MutatingAdmission is implemented by admission chains that also change
// objects, as kube's mutating admission does: Admit changes obj in
// place, before the registry validates it.
type MutatingAdmission interface {
	Admit(ctx context.Context, a Attributes, obj runtime.Object) error
}

// admitDelete runs the mutating admission of a delete (of name, or of a
// collection when name is ""), before the registry's, as kube's handler
// does: there is no object to change, only a request to refuse.
func (s *Scope) admitDelete(ctx context.Context, ns, name string, opts *metav1.DeleteOptions) error {
	m, ok := s.Admission.(MutatingAdmission)
	if !ok {
		return nil
	}
	return m.Admit(ctx, s.attributes(Delete, ns, name, nil, nil, opts), nil)
}

// mutateCreate runs the endpoint's mutating admission of a create of obj
// where kube runs it: a storage that hosts it (rest.MutationHost, a
// rest.MutatingCreater) is given the returned mutation to run after its
// built-in mutation (its Begin hooks) and before its strategy; the object
// of any other storage (a Binding, an Eviction, a TokenRequest, a review)
// is admitted here, before the storage sees it, as kube's create handler
// does, and the mutation returned is nil.
func (s *Scope) mutateCreate(ctx context.Context, creater rest.Creater, ns, name string, obj runtime.Object, opts runtime.Object) (rest.MutateObjectFunc, error) {
	m, ok := s.Admission.(MutatingAdmission)
	if !ok {
		return nil, nil
	}
	if _, ok := creater.(rest.MutatingCreater); ok && rest.HostsMutation(s.Storage) {
		return s.mutation(m, ns, name, opts), nil
	}
	if err := m.Admit(ctx, s.attributes(Create, ns, name, obj, nil, opts), obj); err != nil {
		return nil, err
	}
	dedupOwnerReferences(ctx, obj, true)
	return nil, nil
}

// create creates obj through creater, running mutate (nil for none) in
// the storage, which then hosts it (mutateCreate).
func create(ctx context.Context, creater rest.Creater, obj runtime.Object, mutate rest.MutateObjectFunc, validate rest.ValidateObjectFunc,
	opts *metav1.CreateOptions) (runtime.Object, error) {
	if mutate == nil {
		return creater.Create(ctx, obj, validate, opts)
	}
	return creater.(rest.MutatingCreater).CreateMutating(ctx, obj, mutate, validate, opts)
}

// mutateUpdate is mutateCreate for an update (or a patch) computed by
// info, returning the info to update with: for a storage that hosts
// mutating admission, info carrying it (rest.WithUpdateMutation); for
// any other (a Scale), an info whose object is admitted against the old
// one once computed, as kube's update handler's admission transformer
// does.
func (s *Scope) mutateUpdate(ns, name string, info rest.UpdatedObjectInfo, opts runtime.Object) rest.UpdatedObjectInfo {
	m, ok := s.Admission.(MutatingAdmission)
	if !ok {
		return info
	}
	if rest.HostsMutation(s.Storage) {
		return rest.WithUpdateMutation(info, s.mutation(m, ns, name, opts))
	}
	return &admittedInfo{UpdatedObjectInfo: info, admit: func(ctx context.Context, obj, old runtime.Object) error {
		if err := m.Admit(ctx, s.attributes(Update, ns, name, obj, old, opts), obj); err != nil {
			return err
		}
		dedupOwnerReferences(ctx, obj, true)
		return nil
	}}
}

// mutation is the endpoint's mutating admission of a create or an update
// (a create when the update creates: old is nil), for a storage that
// hosts it to run. It admits the endpoint's own objects only: the objects
// the storage writes on the way are not the request's.
func (s *Scope) mutation(m MutatingAdmission, ns, name string, opts runtime.Object) rest.MutateObjectFunc {
	endpointType := reflect.TypeOf(s.Storage.New())
	return func(ctx context.Context, obj, old runtime.Object) error {
		if reflect.TypeOf(obj) != endpointType {
			return nil
		}
		op := Update
		if old == nil {
			op = Create
		}
		if err := m.Admit(ctx, s.attributes(op, ns, name, obj, old, opts), obj); err != nil {
			return err
		}
		dedupOwnerReferences(ctx, obj, true)
		return nil
	}
}

// admittedInfo admits the object its inner info computes.
type admittedInfo struct {
	rest.UpdatedObjectInfo
	admit func(ctx context.Context, obj, old runtime.Object) error
}

func (i *admittedInfo) UpdatedObject(ctx context.Context, old runtime.Object) (runtime.Object, error) {
	obj, err := i.UpdatedObjectInfo.UpdatedObject(ctx, old)
	if err != nil {
		return nil, err
	}
	if err := i.admit(ctx, obj, old); err != nil {
		return nil, err
	}
	return obj, nil
}

// updateValidation is the admission check of an update.
func (s *Scope) updateValidation(ns, name string, opts *metav1.UpdateOptions) rest.ValidateObjectUpdateFunc {
	if s.Admission == nil {
		return nil
	}
	return func(ctx context.Context, obj, old runtime.Object) error {
		return s.validationOf(Update, ns, name, old, opts)(ctx, obj)
	}
}

// admissionOptions returns the options admission sees, as kube's
// handlers pass them: a create through an update or a patch has
// CreateOptions; each carries its kind.
func admissionOptions(op Operation, opts runtime.Object) (runtime.Object, bool) {
	switch o := opts.(type) {
	case *metav1.CreateOptions:
		o = o.DeepCopy()
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("CreateOptions"))
		return o, len(o.DryRun) > 0
	case *metav1.UpdateOptions:
		if op == Create {
			return admissionOptions(op, &metav1.CreateOptions{DryRun: o.DryRun, FieldManager: o.FieldManager, FieldValidation: o.FieldValidation})
		}
		o = o.DeepCopy()
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("UpdateOptions"))
		return o, len(o.DryRun) > 0
	case *metav1.DeleteOptions:
		o = o.DeepCopy()
		o.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("DeleteOptions"))
		return o, len(o.DryRun) > 0
	}
	return opts, false
}

// mediaTypes is what the endpoint reads and writes.
// outputTargets are the representations a response of s may take besides
// the object itself: others, and a Table when the storage converts to one
// (kube's scope.TableConvertor). Where it does not (the reviews, which
// have no metadata), a Table request fails negotiation with 406 before
// the request runs, as in kube.
func (s *Scope) outputTargets(others ...negotiation.Target) []negotiation.Target {
	if _, ok := s.Storage.(rest.TableConvertor); ok {
		return append([]negotiation.Target{negotiation.TargetTable}, others...)
	}
	return others
}

func (s *Scope) mediaTypes() *negotiation.MediaTypes {
	if s.MediaTypes == nil {
		return negotiation.Builtin
	}
	return s.MediaTypes
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) { return meta.Accessor(obj) }
