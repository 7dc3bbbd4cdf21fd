// Package admission holds the validating admission checks the handlers run
// on writes, as kube's admission plugins of the same names.
package admission

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// immortalNamespaces cannot be deleted.
var immortalNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// NamespaceLifecycle refuses to create objects in a namespace that does
// not exist or is being deleted, and to delete the system namespaces.
type NamespaceLifecycle struct {
	// Namespaces reads namespaces (the namespaces storage) as stored.
	Namespaces rest.ObjectGetter

	mu sync.Mutex
	// deleted remembers the namespaces this server was asked to delete in
	// the last forceLiveLookupTTL: the cache may not show them Terminating
	// yet, so creates in them look the namespace up in etcd (as kube's
	// plugin does).
	deleted map[string]time.Time
	// phases remembers whether each namespace is terminating, at the
	// revision it was read at: a create decodes its namespace only when
	// that changed, not on every create.
	phases map[string]namespacePhase
}

type namespacePhase struct {
	rev         int64
	terminating bool
}

// maxRememberedPhases bounds phases; past it, they are forgotten at once
// (then read again, one decode per namespace).
const maxRememberedPhases = 10000

// forceLiveLookupTTL is how long a deleted namespace is looked up live.
const forceLiveLookupTTL = 30 * time.Second

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// Validate implements handlers.Admission.
func (l *NamespaceLifecycle) Validate(ctx context.Context, a handlers.Attributes, _ runtime.Object) error {
	isNamespace := a.Resource.Group == "" && a.Resource.Resource == "namespaces"
	if isNamespace && a.Operation == handlers.Delete && a.Subresource == "" {
		for _, immortal := range immortalNamespaces {
			if a.Name == immortal {
				return apierrors.NewForbidden(namespacesResource, a.Name, fmt.Errorf("this namespace may not be deleted"))
			}
		}
		l.forceLiveLookup(a.Name)
		return nil
	}
	if a.Operation != handlers.Create || a.Namespace == "" || isNamespace {
		return nil
	}
	// The cache answers almost every check; a namespace it has not seen
	// yet (created a moment ago) is looked up in etcd, as kube's plugin
	// falls back to a live lookup.
	nsCtx := request.WithNamespace(ctx, "")
	rv := "0"
	if l.recentlyDeleted(a.Namespace) {
		rv = ""
	}
	obj, err := l.Namespaces.GetObject(nsCtx, a.Namespace, &metav1.GetOptions{ResourceVersion: rv})
	if apierrors.IsNotFound(err) && rv != "" {
		obj, err = l.Namespaces.GetObject(nsCtx, a.Namespace, &metav1.GetOptions{})
	}
	if err != nil {
		return err // NotFound names the namespace, as kube's does
	}
	if terminating, err := l.terminating(a.Namespace, obj); err != nil || !terminating {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: fmt.Sprintf("%s %q is forbidden: unable to create new content in namespace %s because it is being terminated",
			a.Resource.GroupResource(), a.Name, a.Namespace),
		Details: &metav1.StatusDetails{
			Name: a.Name, Group: a.Resource.Group, Kind: a.Resource.Resource,
			Causes: []metav1.StatusCause{{
				Type:    corev1.NamespaceTerminatingCause,
				Message: fmt.Sprintf("namespace %s is being terminated", a.Namespace),
				Field:   "metadata.namespace",
			}},
		},
	}}
}

// terminating reports whether namespace name, stored as obj, is being
// deleted: remembered for obj's revision, else read from obj.
func (l *NamespaceLifecycle) terminating(name string, obj *storage.Object) (bool, error) {
	l.mu.Lock()
	p, ok := l.phases[name]
	l.mu.Unlock()
	if ok && p.rev == obj.ResourceVersion {
		return p.terminating, nil
	}
	ns := &corev1.Namespace{}
	if err := obj.Decode(ns); err != nil {
		return false, apierrors.NewInternalError(err)
	}
	p = namespacePhase{rev: obj.ResourceVersion, terminating: ns.Status.Phase == corev1.NamespaceTerminating}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.phases == nil || len(l.phases) >= maxRememberedPhases {
		l.phases = map[string]namespacePhase{}
	}
	if cur, ok := l.phases[name]; !ok || cur.rev < p.rev { // a racing create may have seen a newer one
		l.phases[name] = p
	}
	return p.terminating, nil
}

func (l *NamespaceLifecycle) forceLiveLookup(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.deleted == nil {
		l.deleted = map[string]time.Time{}
	}
	now := time.Now()
	for n, at := range l.deleted { // keep the map small
		if now.Sub(at) > forceLiveLookupTTL {
			delete(l.deleted, n)
		}
	}
	l.deleted[name] = now
}

func (l *NamespaceLifecycle) recentlyDeleted(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.deleted[name]
	return ok && time.Since(at) <= forceLiveLookupTTL
}
