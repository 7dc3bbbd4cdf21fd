package admission

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/apiserver/handlers"
)

// DenyServiceExternalIPs is kube's plugin of that name: no service may
// take an external IP it did not already have (CVE-2020-8554: a tenant's
// external IP intercepts traffic meant for that address); removing them
// stays allowed.
type DenyServiceExternalIPs struct{}

var errExternalIPs = errors.New("Use of external IPs is denied by admission control") //nolint:staticcheck // kube's message

// Validate implements handlers.Admission.
func (DenyServiceExternalIPs) Validate(_ context.Context, a handlers.Attributes, obj runtime.Object) error {
	if a.Resource.GroupResource() != corev1.Resource("services") || a.Subresource != "" ||
		(a.Operation != handlers.Create && a.Operation != handlers.Update) {
		return nil
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("Expected Service resource, got: %v", a.Kind)) //nolint:staticcheck // kube's message
	}
	old, _ := a.Old.(*corev1.Service)
	if externalIPsSubset(svc, old) {
		return nil
	}
	return a.Forbidden(obj, errExternalIPs)
}

// externalIPsSubset reports whether svc's external IPs are all old's.
func externalIPsSubset(svc, old *corev1.Service) bool {
	if len(svc.Spec.ExternalIPs) == 0 {
		return true
	}
	if old == nil {
		return false
	}
	had := map[string]bool{}
	for _, ip := range old.Spec.ExternalIPs {
		had[ip] = true
	}
	for _, ip := range svc.Spec.ExternalIPs {
		if !had[ip] {
			return false
		}
	}
	return true
}
