package aggregator

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// Resolver finds the address a service's port is reached at.
type Resolver interface {
	ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error)
}

// EndpointsResolver routes to a ready endpoint of the service, chosen at
// random among its EndpointSlices' (those of its primary IP family
// first), as kube's aggregator does with --enable-aggregator-routing.
// Unlike services/proxy, the endpoint need not be a pod's: an
// extension server outside the cluster is listed by hand.
type EndpointsResolver struct {
	Services       rest.Getter
	EndpointSlices rest.Lister // nil: no endpoints
}

// ResolveEndpoint implements Resolver.
func (r EndpointsResolver) ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error) {
	svc, err := getService(ctx, r.Services, namespace, name)
	if err != nil {
		return nil, err
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
	default:
		return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
	}
	svcPort, err := findServicePort(svc, port)
	if err != nil {
		return nil, err
	}
	if r.EndpointSlices == nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
	}
	preferred := discoveryv1.AddressTypeIPv4
	if len(svc.Spec.IPFamilies) > 0 {
		preferred = discoveryv1.AddressType(svc.Spec.IPFamilies[0])
	}
	slices, err := endpointslice.ServiceSlices(request.WithNamespace(ctx, namespace), r.EndpointSlices, name, preferred)
	if err != nil {
		return nil, err
	}
	if hostPort := endpointslice.RandomEndpoint(slices, svcPort.Name, nil); hostPort != "" {
		return &url.URL{Scheme: "https", Host: hostPort}, nil
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", svc.Name))
}

// ClusterIPResolver routes to the service's cluster IP (an ExternalName
// service: its name), as kube's aggregator does by default: only useful
// where something (kube-proxy) routes cluster IPs from this host.
type ClusterIPResolver struct {
	Services rest.Getter
}

// ResolveEndpoint implements Resolver.
func (r ClusterIPResolver) ResolveEndpoint(ctx context.Context, namespace, name string, port int32) (*url.URL, error) {
	svc, err := getService(ctx, r.Services, namespace, name)
	if err != nil {
		return nil, err
	}
	switch {
	case svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return nil, fmt.Errorf(`cannot route to service with ClusterIP "None"`)
	case svc.Spec.Type == corev1.ServiceTypeClusterIP, svc.Spec.Type == corev1.ServiceTypeLoadBalancer,
		svc.Spec.Type == corev1.ServiceTypeNodePort:
		svcPort, err := findServicePort(svc, port)
		if err != nil {
			return nil, err
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(svcPort.Port)))}, nil
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(svc.Spec.ExternalName, strconv.Itoa(int(port)))}, nil
	}
	return nil, fmt.Errorf("unsupported service type %q", svc.Spec.Type)
}

func getService(ctx context.Context, services rest.Getter, namespace, name string) (*corev1.Service, error) {
	obj, err := services.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("aggregator: %T is no service", obj)
	}
	return svc, nil
}

func findServicePort(svc *corev1.Service, port int32) (*corev1.ServicePort, error) {
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == port {
			return &svc.Spec.Ports[i], nil
		}
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", port, svc.Name))
}
