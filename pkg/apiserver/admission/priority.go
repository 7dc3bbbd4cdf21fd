package admission

import (
	"context"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
	"github.com/miniapiserver/miniapiserver/pkg/registry/scheduling"
)

// Priority refuses a second globalDefault priority class, as the
// validating half of kube's plugin of that name does; its mutating half
// (a pod's priority from its class) is applied by the pods' storage.
type Priority struct {
	// PriorityClasses lists the priority classes.
	PriorityClasses rest.Lister
}

// Validate implements handlers.Admission.
func (p *Priority) Validate(ctx context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != schedulingv1.Resource("priorityclasses") || a.Subresource != "" ||
		(a.Operation != handlers.Create && a.Operation != handlers.Update) {
		return nil
	}
	pc, ok := obj.(*schedulingv1.PriorityClass)
	if !ok || !pc.GlobalDefault {
		return nil
	}
	classes, err := scheduling.ListPriorityClasses(ctx, p.PriorityClasses)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %v", err))
	}
	// An update may keep its own class the default.
	if def := scheduling.DefaultPriorityClass(classes); def != nil && (a.Operation == handlers.Create || def.Name != pc.Name) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name,
			fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", def.Name))
	}
	return nil
}
