package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/core"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// LimitRanger refuses new pods, and new or changed claims, that break a
// LimitRange of their namespace (a minimum, maximum or limit to request
// ratio), as kube's plugin of that name does; the defaults it gives new
// pods are applied by the pods' storage (core.ListLimitRanges and the
// pods' AdmitCreate hook).
type LimitRanger struct {
	// LimitRanges reads the LimitRanges of a namespace.
	LimitRanges rest.Lister
}

// Validate implements handlers.Admission.
func (l *LimitRanger) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.Group != "" || a.Subresource != "" {
		return nil
	}
	var check func(*corev1.LimitRange) error
	switch o := obj.(type) {
	case *corev1.Pod:
		// A pod's containers and their resources cannot change after
		// its creation (resizes go through a subresource).
		if a.Operation == handlers.Create {
			check = func(lr *corev1.LimitRange) error { return core.ValidatePodLimits(lr, o) }
		}
	case *corev1.PersistentVolumeClaim:
		if a.Operation == handlers.Create || a.Operation == handlers.Update {
			check = func(lr *corev1.LimitRange) error { return core.ValidateClaimLimits(lr, o) }
		}
	}
	if check == nil {
		return nil
	}
	if a.Old != nil {
		if m, err := meta.Accessor(a.Old); err == nil && m.GetDeletionTimestamp() != nil {
			return nil
		}
	}
	gr := a.Resource.GroupResource()
	ranges, err := core.ListLimitRanges(ctx, l.LimitRanges)
	if err != nil {
		return apierrors.NewForbidden(gr, a.Name, fmt.Errorf("unable to %s %v at this time because there was an error enforcing limit ranges", a.Operation, a.Resource))
	}
	for _, lr := range ranges {
		if err := check(lr); err != nil {
			return apierrors.NewForbidden(gr, a.Name, err)
		}
	}
	return nil
}
