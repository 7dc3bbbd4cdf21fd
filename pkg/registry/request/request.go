// Package request carries what the HTTP layer knows about a request (the
// namespace of its URL, the user) to the registry, through the context.
package request

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
)

type key int

const (
	namespaceKey key = iota
	userKey
	infoKey
	warningsKey
)

// WithNamespace returns a context carrying the request's namespace ("" for
// cluster-scoped resources and for lists across all namespaces).
func WithNamespace(ctx context.Context, ns string) context.Context {
	return context.WithValue(ctx, namespaceKey, ns)
}

// NamespaceValue returns the request's namespace, "" when none.
func NamespaceValue(ctx context.Context) string {
	ns, _ := ctx.Value(namespaceKey).(string)
	return ns
}

// WithUser returns a context carrying the request's user.
func WithUser(ctx context.Context, u user.Info) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the request's user, if authenticated.
func UserFrom(ctx context.Context) (user.Info, bool) {
	u, ok := ctx.Value(userKey).(user.Info)
	return u, ok
}

// Info describes the resource a request addresses, as the router found it.
type Info struct {
	Verb        string // get, list, watch, create, update, patch, delete, deletecollection
	Resource    schema.GroupVersionResource
	Subresource string
	Namespace   string
	Name        string
}

// WithInfo returns a context carrying the request's Info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

// InfoFrom returns the request's Info, when the request addresses a resource.
func InfoFrom(ctx context.Context) (*Info, bool) {
	i, ok := ctx.Value(infoKey).(*Info)
	return i, ok
}
