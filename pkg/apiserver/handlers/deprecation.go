package handlers

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// The lifecycle methods k8s.io/api generates for its types.
type (
	apiLifecycleDeprecated  interface{ APILifecycleDeprecated() (major, minor int) }
	apiLifecycleRemoved     interface{ APILifecycleRemoved() (major, minor int) }
	apiLifecycleReplacement interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// DeprecationWarning is kube's warning on every request to an endpoint
// whose kind is deprecated in the served Kubernetes version (major.minor):
// `v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1
// EndpointSlice`. obj is an object of the endpoint's Go type; "" when it
// is not deprecated.
func DeprecationWarning(obj runtime.Object, gvk schema.GroupVersionKind, major, minor int) string {
	deprecated, ok := obj.(apiLifecycleDeprecated)
	if !ok {
		return ""
	}
	dMajor, dMinor := deprecated.APILifecycleDeprecated()
	if (dMajor == 0 && dMinor == 0) || dMajor > major || (dMajor == major && dMinor > minor) {
		return ""
	}
	warning := fmt.Sprintf("%s %s is deprecated in v%d.%d+", gvk.GroupVersion(), gvk.Kind, dMajor, dMinor)
	if removed, ok := obj.(apiLifecycleRemoved); ok {
		if rMajor, rMinor := removed.APILifecycleRemoved(); rMajor != 0 || rMinor != 0 {
			warning += fmt.Sprintf(", unavailable in v%d.%d+", rMajor, rMinor)
		}
	}
	if replaced, ok := obj.(apiLifecycleReplacement); ok {
		if r := replaced.APILifecycleReplacement(); !r.Empty() {
			warning += fmt.Sprintf("; use %s %s", r.GroupVersion(), r.Kind)
		}
	}
	return warning
}

// WithWarning adds warning (when not empty) to every response of h.
func WithWarning(h http.Handler, warning string) http.Handler {
	if warning == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		request.AddWarning(r.Context(), warning)
		h.ServeHTTP(w, r)
	})
}
