package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServiceProxyREST serves services/proxy and services/proxy/{path}:
// requests passed to a ready endpoint of the service, chosen at random
// among its EndpointSlices' endpoints for the port the name gives
// ([scheme:]name[:port], the port by name or number).
type ServiceProxyREST struct {
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

var (
	_ rest.Connecter = (*ServiceProxyREST)(nil)
	_ rest.Scoper    = (*ServiceProxyREST)(nil)
)

// New implements rest.Storage.
func (r *ServiceProxyREST) New() runtime.Object { return &corev1.ServiceProxyOptions{} }

// Destroy implements rest.Storage.
func (r *ServiceProxyREST) Destroy() {}

// NamespaceScoped implements rest.Scoper.
func (r *ServiceProxyREST) NamespaceScoped() bool { return true }

// ConnectMethods implements rest.Connecter.
func (r *ServiceProxyREST) ConnectMethods() []string { return proxyMethods }

// NewConnectOptions implements rest.Connecter.
func (r *ServiceProxyREST) NewConnectOptions() (runtime.Object, bool, string) {
	return &corev1.ServiceProxyOptions{}, true, "path"
}

// Connect implements rest.Connecter.
func (r *ServiceProxyREST) Connect(ctx context.Context, id string, options runtime.Object, responder rest.Responder) (http.Handler, error) {
	opts, ok := options.(*corev1.ServiceProxyOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", options)
	}
	loc, err := r.location(ctx, id)
	if err != nil {
		return nil, err
	}
	loc.Path = utilnet.JoinPreservingTrailingSlash(loc.Path, opts.Path)
	return proxyHandler(loc, r.proxy, responder), nil
}

// location is kube's service ResourceLocation: a port given by number
// is the service port of that number, by name its name.
func (r *ServiceProxyREST) location(ctx context.Context, id string) (*url.URL, error) {
	scheme, name, portName, valid := utilnet.SplitSchemeNamePort(id)
	if !valid {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", id))
	}
	if number, err := strconv.ParseInt(portName, 10, 64); err == nil {
		if portName, err = r.portName(ctx, name, number); err != nil {
			return nil, err
		}
	}
	slices, err := r.serviceSlices(ctx, name)
	if err != nil {
		return nil, err
	}
	hostPort, err := r.randomEndpoint(ctx, slices, portName)
	if err != nil {
		return nil, err
	}
	if hostPort == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", name))
	}
	return &url.URL{Scheme: scheme, Host: hostPort}, nil
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
	list, err := r.slices.List(ctx, &metainternalversion.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	slices := make([]discoveryv1.EndpointSlice, len(list.Items))
	for i, item := range list.Items {
		if err := item.Decode(&slices[i]); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	rand.Shuffle(len(slices), func(i, j int) { slices[i], slices[j] = slices[j], slices[i] })
	sort.SliceStable(slices, func(i, j int) bool { return slices[i].AddressType == r.family && slices[j].AddressType != r.family })
	return slices, nil
}

// randomEndpoint is a ready endpoint, chosen from a random start, of the
// first slice serving the named port whose address is the IP of the pod
// it names ("" when there is none).
func (r *ServiceProxyREST) randomEndpoint(ctx context.Context, slices []discoveryv1.EndpointSlice, portName string) (string, error) {
	for _, slice := range slices {
		for _, port := range slice.Ports {
			if port.Name == nil || *port.Name != portName || port.Port == nil || len(slice.Endpoints) == 0 {
				continue
			}
			offset := rand.IntN(len(slice.Endpoints))
			for i := range slice.Endpoints {
				ep := &slice.Endpoints[(i+offset)%len(slice.Endpoints)]
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if !r.podHasAddress(ctx, ep) {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*port.Port))), nil
			}
		}
	}
	return "", nil
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
