package policy

import (
	"context"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/fieldmanager"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Budgets gives the eviction subresource of pods (core group) the
// PodDisruptionBudgets of this group, as kube's eviction reaches them
// through its loopback client. The server builds this group before the
// core group, and hands the core group its GroupStorage's Budgets.
type Budgets struct {
	store *generic.Store
	// status writes through poddisruptionbudgets/status, as
	// kube-apiserver's loopback client does.
	status rest.Updater
}

var _ core.DisruptionBudgets = (*Budgets)(nil)

// kubeAPIServer is the field manager of what kube-apiserver writes
// through its loopback client.
const kubeAPIServer = "kube-apiserver"

func newBudgets(store *generic.Store) *Budgets {
	status := generic.NewStatusREST(store, podDisruptionBudgets.StatusStrategy)
	kind := policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")
	return &Budgets{store: store, status: fieldmanager.TrackingUpdater(status, kind, "status", kubeAPIServer)}
}

// List implements core.DisruptionBudgets.
func (b *Budgets) List(ctx context.Context, ns string) ([]policyv1.PodDisruptionBudget, error) {
	list, err := b.store.List(request.WithNamespace(ctx, ns), &metainternalversion.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]policyv1.PodDisruptionBudget, len(list.Items))
	for i, item := range list.Items {
		if err := item.Decode(&out[i]); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	return out, nil
}

// Get implements core.DisruptionBudgets.
func (b *Budgets) Get(ctx context.Context, ns, name string) (*policyv1.PodDisruptionBudget, error) {
	obj, err := b.store.Get(request.WithNamespace(ctx, ns), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj.(*policyv1.PodDisruptionBudget), nil
}

// UpdateStatus implements core.DisruptionBudgets.
func (b *Budgets) UpdateStatus(ctx context.Context, pdb *policyv1.PodDisruptionBudget) error {
	_, _, err := b.status.Update(request.WithNamespace(ctx, pdb.Namespace), pdb.Name, &rest.DefaultUpdatedObjectInfo{Obj: pdb}, nil, nil, false, &metav1.UpdateOptions{})
	return err
}
