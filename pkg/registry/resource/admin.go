package resource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// adminAccess is kube's check (in its registry, not its validation) that
// a claim or template asking for admin access to devices, or a status
// granting it, lives in a namespace labelled for it.
type adminAccess struct {
	namespaces rest.Getter // nil: none, every request for admin access fails
}

// checkRequests checks a claim's or template's requests; only exact
// requests may ask for admin access. The path is kube's, which names the
// request's field as v1beta1 did (spec.devices.requests[i].adminAccess)
// for templates as for claims.
func (a adminAccess) checkRequests(ctx context.Context, namespace string, requests []resourcev1.DeviceRequest) field.ErrorList {
	for i, r := range requests {
		if r.Exactly != nil && r.Exactly.AdminAccess != nil && *r.Exactly.AdminAccess {
			return a.checkNamespace(ctx, namespace, field.NewPath("spec", "devices", "requests").Index(i).Child("adminAccess"))
		}
	}
	return nil
}

// checkStatus checks an allocation granting admin access, unless the old
// one did already (an allocation never changes once set).
func (a adminAccess) checkStatus(ctx context.Context, namespace string, allocation, old *resourcev1.AllocationResult) field.ErrorList {
	if _, granted := adminGranted(old); granted {
		return nil
	}
	if path, granted := adminGranted(allocation); granted {
		return a.checkNamespace(ctx, namespace, path)
	}
	return nil
}

func adminGranted(allocation *resourcev1.AllocationResult) (*field.Path, bool) {
	if allocation == nil {
		return nil, false
	}
	for i, r := range allocation.Devices.Results {
		if r.AdminAccess != nil && *r.AdminAccess {
			return field.NewPath("status", "allocation", "devices", "results").Index(i).Child("adminAccess"), true
		}
	}
	return nil, false
}

func (a adminAccess) checkNamespace(ctx context.Context, namespace string, path *field.Path) field.ErrorList {
	if a.namespaces == nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: no namespace storage"))}
	}
	obj, err := a.namespaces.Get(request.WithNamespace(ctx, ""), namespace, &metav1.GetOptions{})
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("could not retrieve namespace to verify admin access: %w", err))}
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok || ns.Labels[resourcev1.DRAAdminNamespaceLabelKey] != "true" {
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("admin access to devices requires the `%s: true` label on the containing namespace", resourcev1.DRAAdminNamespaceLabelKey))}
	}
	return nil
}
