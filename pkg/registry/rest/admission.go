package rest

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// MutateObjectFunc is the mutating admission of a write (kube's mutating
// admission webhooks): it may change obj in place. old is the current
// object of an update, nil on a create.
type MutateObjectFunc func(ctx context.Context, obj, old runtime.Object) error

type mutationKey struct{}

// WithMutation returns ctx carrying the mutating admission of the write
// it serves. A storage runs it where kube runs mutating webhooks: after
// the resource's own mutation (its Begin hooks, which do here what kube's
// built-in mutating admission plugins do), before its strategy prepares
// and validates the object. It travels in the context because only the
// storage knows when that is (inside the retries of an update, on the
// current object).
func WithMutation(ctx context.Context, mutate MutateObjectFunc) context.Context {
	return context.WithValue(ctx, mutationKey{}, mutate)
}

// TakeMutation returns the mutation ctx carries (nil when none) and a
// context without it: the storage the request reaches first takes it, so
// that the writes it makes on the way (a hook creating another object)
// are not admitted as the request's object.
func TakeMutation(ctx context.Context) (MutateObjectFunc, context.Context) {
	mutate, _ := ctx.Value(mutationKey{}).(MutateObjectFunc)
	if mutate == nil {
		return nil, ctx
	}
	return mutate, context.WithValue(ctx, mutationKey{}, MutateObjectFunc(nil))
}

// MutationHost is implemented by the storages that run the request's
// mutating admission themselves (TakeMutation), at the point where kube
// runs it relative to their built-in mutation. The handlers admit the
// objects of other storages (a Scale, a Binding, an Eviction) themselves,
// before those storages see them, as kube's handlers do.
type MutationHost interface {
	HostsMutation() bool
}

// HostsMutation reports whether storage runs mutating admission itself.
func HostsMutation(storage any) bool {
	h, ok := storage.(MutationHost)
	return ok && h.HostsMutation()
}

// ReplaceObject makes dst (a pointer) hold what src holds: how a mutation
// that computes a new object (a patched copy, a conversion) changes the
// object it was given. Both must be of the same type.
func ReplaceObject(dst, src runtime.Object) error {
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Type() != s.Type() || d.Kind() != reflect.Pointer || d.IsNil() || s.IsNil() {
		return fmt.Errorf("cannot replace a %T with a %T", dst, src)
	}
	d.Elem().Set(s.Elem())
	return nil
}
