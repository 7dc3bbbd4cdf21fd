package rest

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// MutateObjectFunc is the mutating admission of a write (kube's mutating
// admission webhooks): it may change obj in place. old is the current
// object of an update, nil on a create.
type MutateObjectFunc func(ctx context.Context, obj, old runtime.Object) error

// MutatingCreater is a Creater that runs the request's mutating
// admission itself, where kube runs mutating webhooks: after the
// resource's own mutation (its Begin hooks, which do here what kube's
// built-in mutating admission plugins do), before its strategy prepares
// and validates the object. mutate runs once per attempt on the object
// about to be created (a generated name is generated after it); nil runs
// none. It is an argument, not the context's, so the objects the storage
// writes on the way (a hook creating another object) are not admitted as
// the request's object.
type MutatingCreater interface {
	Creater
	CreateMutating(ctx context.Context, obj runtime.Object, mutate MutateObjectFunc, createValidation ValidateObjectFunc,
		options *metav1.CreateOptions) (runtime.Object, error)
}

// MutatingObjectInfo is an UpdatedObjectInfo that carries the request's
// mutating admission, as kube's handlers wrap an update's info with
// their admission transformers. A storage that hosts mutation
// (MutationHost) runs it on the object the info computes, after its
// Begin hooks and before its strategy, inside the update's retries, with
// old nil when the update creates. A storage that wraps the info of an
// update it forwards keeps the mutation (WithUpdateMutation).
type MutatingObjectInfo interface {
	UpdatedObjectInfo
	Mutation() MutateObjectFunc
}

// WithUpdateMutation returns info carrying mutate (info itself when
// mutate is nil).
func WithUpdateMutation(info UpdatedObjectInfo, mutate MutateObjectFunc) UpdatedObjectInfo {
	if mutate == nil {
		return info
	}
	return &mutatingObjectInfo{UpdatedObjectInfo: info, mutate: mutate}
}

// MutationOf returns the mutating admission info carries, nil when none.
func MutationOf(info UpdatedObjectInfo) MutateObjectFunc {
	if m, ok := info.(MutatingObjectInfo); ok {
		return m.Mutation()
	}
	return nil
}

type mutatingObjectInfo struct {
	UpdatedObjectInfo
	mutate MutateObjectFunc
}

func (i *mutatingObjectInfo) Mutation() MutateObjectFunc { return i.mutate }

// MutationHost is implemented by the storages that run the request's
// mutating admission themselves: of a create given to CreateMutating
// (MutatingCreater), of an update carried by its info (MutationOf). The
// handlers admit the objects of other storages (a Scale, a Binding, an
// Eviction) themselves, before those storages see them, as kube's
// handlers do.
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
