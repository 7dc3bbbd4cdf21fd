package webhookclient

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// EndpointsResolver finds services through the registry, as
// kube-apiserver does with --enable-aggregator-routing: a ready address of
// the service's Endpoints for the port (picked at random); an ExternalName
// service is its external name.
type EndpointsResolver struct {
	Services, Endpoints rest.Getter
}

var _ ServiceResolver = EndpointsResolver{}

// ResolveEndpoint implements ServiceResolver.
func (r EndpointsResolver) ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error) {
	ctx = request.WithNamespace(ctx, namespace)
	obj, err := r.Services.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("webhook: %T is no service", obj)
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return &url.URL{Scheme: "https", Host: hostPort(svc.Spec.ExternalName, port)}, nil
	}
	var portName string
	found := false
	for _, p := range svc.Spec.Ports {
		if p.Port == port {
			portName, found = p.Name, true
			break
		}
	}
	if !found {
		return nil, fmt.Errorf("no service port %d found for service %q", port, name)
	}
	obj, err = r.Endpoints.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	eps, ok := obj.(*corev1.Endpoints)
	if !ok {
		return nil, fmt.Errorf("webhook: %T is no endpoints", obj)
	}
	for _, subset := range eps.Subsets {
		if len(subset.Addresses) == 0 {
			continue
		}
		for _, p := range subset.Ports {
			if p.Name == portName {
				addr := subset.Addresses[rand.IntN(len(subset.Addresses))]
				return &url.URL{Scheme: "https", Host: hostPort(addr.IP, p.Port)}, nil
			}
		}
	}
	return nil, fmt.Errorf("no endpoints available for service %q", name)
}
