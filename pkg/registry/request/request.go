// Package request carries what the HTTP layer knows about a request (the
// namespace of its URL, the user, what it addresses) to the registry,
// through the context.
package request

import (
	"context"

	"k8s.io/apiserver/pkg/authentication/user"
)

type key int

const (
	namespaceKey key = iota
	userKey
	infoKey
	warningsKey
	auditKey
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

// WithUser returns a context carrying the request's user: the
// authenticated one, or the impersonated one once impersonation is
// allowed.
func WithUser(ctx context.Context, u user.Info) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the request's user. Every request of the secure port
// has one (system:anonymous when it showed no credentials); calls from
// inside the process (controllers) have none.
func UserFrom(ctx context.Context) (user.Info, bool) {
	u, ok := ctx.Value(userKey).(user.Info)
	return u, ok && u != nil
}

// WithInfo returns a context carrying the request's Info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

// InfoFrom returns the request's Info. Every HTTP request has one; calls
// from inside the process have none.
func InfoFrom(ctx context.Context) (*Info, bool) {
	i, ok := ctx.Value(infoKey).(*Info)
	return i, ok && i != nil
}
