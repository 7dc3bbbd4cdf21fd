package generic

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Create implements rest.Creater: CreateMutating with no mutating
// admission.
func (e *Store) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return e.CreateMutating(ctx, obj, nil, createValidation, options)
}

// CreateMutating implements rest.MutatingCreater. A generated name
// that collides is generated again, a few times, as kube does: each
// attempt admits (mutate) a fresh copy of obj.
func (e *Store) CreateMutating(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc,
	options *metav1.CreateOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if m.GetGenerateName() == "" || m.GetName() != "" {
		return e.create(ctx, obj, mutate, createValidation, options)
	}
	var out runtime.Object
	for range maxNameGenerationAttempts {
		if out, err = e.create(ctx, obj.DeepCopyObject(), mutate, createValidation, options); !apierrors.IsAlreadyExists(err) {
			return out, err
		}
	}
	return nil, err
}

func (e *Store) create(ctx context.Context, obj runtime.Object, mutate rest.MutateObjectFunc, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	fillSystemFields(m)
	finish, err := e.beforeCreate(ctx, &e.mainUpdate, obj, mutate, options)
	if err != nil {
		return nil, err
	}
	stored := false
	defer func() { finish(ctx, stored) }()
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	name := m.GetName()
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	ttl, err := e.ttl(obj, 0, false)
	if err != nil {
		return nil, err
	}
	out := e.newFunc()
	if err := e.storageCreate(ctx, key, obj, out, ttl, isDryRun(options.DryRun)); err != nil {
		err = interpretCreateError(err, e.qualifiedResource, name)
		if apierrors.IsAlreadyExists(err) {
			return nil, e.explainAlreadyExists(ctx, key, m.GetGenerateName(), err)
		}
		return nil, err
	}
	stored = true
	return out, nil
}

// explainAlreadyExists words an AlreadyExists as kube does: a collision of
// a generated name asks the client to retry; a clash with an object being
// deleted says so.
func (e *Store) explainAlreadyExists(ctx context.Context, key, generatedFrom string, err error) error {
	status := err.(*apierrors.StatusError)
	if generatedFrom != "" {
		return apierrors.NewGenerateNameConflict(e.qualifiedResource, status.ErrStatus.Details.Name, 1)
	}
	existing := e.newFunc()
	if getErr := e.storage.Get(ctx, key, storage.GetOptions{}, existing); getErr == nil {
		if m, mErr := meta.Accessor(existing); mErr == nil && m.GetDeletionTimestamp() != nil {
			status.ErrStatus.Message = fmt.Sprintf("object is being deleted: %s", status.ErrStatus.Message)
		}
	}
	return status
}

func (e *Store) ttl(obj runtime.Object, existing uint64, update bool) (uint64, error) {
	if e.ttlFunc == nil {
		return existing, nil
	}
	return e.ttlFunc(obj, existing, update)
}

func isDryRun(dryRun []string) bool { return len(dryRun) > 0 }
