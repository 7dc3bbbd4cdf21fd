package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// NamespaceStore is what the namespace plugins need of the namespaces
// storage: reading one as stored, and creating one.
type NamespaceStore interface {
	rest.ObjectGetter
	rest.Creater
}

// NamespaceExists is kube's plugin of that name: a create, update or
// delete in a namespace that does not exist is refused with the
// namespace's NotFound.
type NamespaceExists struct {
	Namespaces rest.ObjectGetter
}

// Validate implements handlers.Admission.
func (e NamespaceExists) Validate(ctx context.Context, a handlers.Attributes, _ runtime.Object) error {
	if !inNamespace(a) {
		return nil
	}
	_, err := lookupNamespace(ctx, e.Namespaces, a.Namespace)
	if err != nil && !apierrors.IsNotFound(err) {
		return apierrors.NewInternalError(err)
	}
	return err
}

// inNamespace reports whether a names a namespaced object other than a
// namespace, what both plugins look at.
func inNamespace(a handlers.Attributes) bool {
	return a.Namespace != "" && a.Kind.GroupKind() != namespaceKind
}

var namespaceKind = corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind()

// lookupNamespace reads namespace name from the watch cache, then, when
// the cache does not have it (yet), from etcd, as kube's plugins fall
// back from their informer to a live read.
func lookupNamespace(ctx context.Context, namespaces rest.ObjectGetter, name string) (*storage.Object, error) {
	ctx = request.WithNamespace(ctx, "")
	obj, err := namespaces.GetObject(ctx, name, &metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		obj, err = namespaces.GetObject(ctx, name, &metav1.GetOptions{})
	}
	return obj, err
}

// NamespaceAutoProvision is kube's plugin of that name: a create in a
// namespace that does not exist creates the namespace first (not on a
// dry run), as the server's own user, through the namespace's admission
// as kube's loopback client does.
type NamespaceAutoProvision struct {
	Namespaces NamespaceStore
	// Admission admits the namespaces created (the server's chain; nil:
	// none).
	Admission handlers.Admission
}

// Validate implements handlers.Admission: the plugin only mutates.
func (*NamespaceAutoProvision) Validate(context.Context, handlers.Attributes, runtime.Object) error {
	return nil
}

// Admit implements handlers.MutatingAdmission.
func (p *NamespaceAutoProvision) Admit(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Operation != handlers.Create || a.DryRun || !inNamespace(a) {
		return nil
	}
	_, err := lookupNamespace(ctx, p.Namespaces, a.Namespace)
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return a.Forbidden(obj, err)
	}
	if err := p.create(ctx, a.Namespace); err != nil && !apierrors.IsAlreadyExists(err) {
		return a.Forbidden(obj, err)
	}
	return nil
}

// create creates namespace name as the server's user.
func (p *NamespaceAutoProvision) create(ctx context.Context, name string) error {
	ctx = request.WithNamespace(ctx, "")
	ctx = request.WithUser(ctx, &user.DefaultInfo{Name: user.APIServerUser,
		Groups: []string{user.SystemPrivilegedGroup, user.AllAuthenticated}})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	opts := &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}}
	attrs := handlers.Attributes{Operation: handlers.Create, Resource: corev1.SchemeGroupVersion.WithResource("namespaces"),
		Name: name, Kind: corev1.SchemeGroupVersion.WithKind("Namespace"), Options: opts}
	var validate rest.ValidateObjectFunc
	if p.Admission != nil {
		if m, ok := p.Admission.(handlers.MutatingAdmission); ok {
			if err := m.Admit(ctx, attrs, ns); err != nil {
				return err
			}
		}
		validate = func(ctx context.Context, obj runtime.Object) error { return p.Admission.Validate(ctx, attrs, obj) }
	}
	_, err := p.Namespaces.Create(ctx, ns, validate, &metav1.CreateOptions{})
	return err
}
