package generic

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/storage"
)

// Mutate applies mutate to the current state of the named object and
// stores the result, retrying on races, without the update strategy: for
// subresources that change a few fields the strategy would refuse (kube's
// pods/binding sets spec.nodeName this way). preconditions may be nil. An
// error from mutate aborts the update and is returned as is; storage
// errors become Status errors as in Update.
func (e *Store) Mutate(ctx context.Context, name string, preconditions *metav1.Preconditions,
	mutate func(obj runtime.Object) error, dryRun bool) (runtime.Object, error) {
	key, err := e.keyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	var pre *storage.Preconditions
	if preconditions != nil {
		pre = &storage.Preconditions{UID: preconditions.UID, ResourceVersion: preconditions.ResourceVersion}
	}
	out := e.newFunc()
	err = e.storageUpdate(ctx, key, out, false, pre, func(existing runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		if err := mutate(existing); err != nil {
			return nil, nil, err
		}
		return existing, nil, nil
	}, dryRun)
	if err != nil {
		return nil, interpretUpdateError(err, e.qualifiedResource, name)
	}
	return out, nil
}
