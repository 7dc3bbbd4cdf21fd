package core

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/endpointslice"
	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServiceProxyREST serves services/proxy and services/proxy/{path}:
// requests passed to a ready endpoint of the service, chosen at random
// among its EndpointSlices' endpoints for the port the name gives
// ([scheme:]name[:port], the port by name or number).
type ServiceProxyREST struct {
	proxyConnecter[corev1.ServiceProxyOptions, *corev1.ServiceProxyOptions]
	services rest.Getter
	pods     rest.Getter
	// slices is discovery.k8s.io's EndpointSlices store (nil: no
	// endpoints, as kube without them).
	slices rest.Lister
	// family is the cluster's primary IP family: its slices are tried
	// first.
	family discoveryv1.AddressType
	proxy  http.RoundTripper
}

// location is kube's service ResourceLocation (a port given by number
// is the service port of that number, by name its name), reached with
// the proxy transport.
func (r *ServiceProxyREST) location(ctx context.Context, id string) (*url.URL, http.RoundTripper, error) {
	scheme, name, portName, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if number, err := strconv.ParseInt(portName, 10, 64); err == nil {
		if portName, err = r.portName(ctx, name, number); err != nil {
			return nil, nil, err
		}
	}
	slices, err := r.serviceSlices(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	// Only the address of a pod the endpoint names, as kube requires.
	hostPort := endpointslice.RandomEndpoint(slices, portName, func(ep *discoveryv1.Endpoint) bool { return r.podHasAddress(ctx, ep) })
	if hostPort == "" {
		return nil, nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, r.proxy, nil
}

// portName is the name of the service's port of the given number.
func (r *ServiceProxyREST) portName(ctx context.Context, service string, number int64) (string, error) {
	obj, err := r.services.Get(ctx, service, &metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	for _, p := range obj.(*corev1.Service).Spec.Ports {
		if int64(p.Port) == number {
			return p.Name, nil
		}
	}
	return "", apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", number, service))
}

// serviceSlices are the EndpointSlices of the service, those of the
// primary IP family first, in random order.
func (r *ServiceProxyREST) serviceSlices(ctx context.Context, service string) ([]discoveryv1.EndpointSlice, error) {
	if r.slices == nil {
		return nil, nil
	}
	if request.NamespaceValue(ctx) == "" {
		return nil, apierrors.NewBadRequest("missing required namespace")
	}
	slices, err := endpointslice.ServiceSlices(ctx, r.slices, service, r.family)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return slices, nil
}

// podHasAddress says whether the endpoint names a pod of the request's
// namespace whose IPs include the endpoint's address, as kube requires:
// an EndpointSlice written by hand must not make the server reach
// elsewhere.
func (r *ServiceProxyREST) podHasAddress(ctx context.Context, ep *discoveryv1.Endpoint) bool {
	ref := ep.TargetRef
	if ref == nil || ref.Namespace != request.NamespaceValue(ctx) || len(ep.Addresses) == 0 {
		return false
	}
	obj, err := r.pods.Get(ctx, ref.Name, &metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, ip := range obj.(*corev1.Pod).Status.PodIPs {
		if ip.IP == ep.Addresses[0] {
			return true
		}
	}
	return false
}
