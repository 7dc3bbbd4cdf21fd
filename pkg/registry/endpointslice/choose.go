package endpointslice

import (
	"context"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"

	discoveryv1 "k8s.io/api/discovery/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// ServiceSlices lists, in the namespace of ctx, the EndpointSlices of the
// named service (those labelled kubernetes.io/service-name with its name)
// in random order, those of the preferred address type first, so that
// requests spread over the service's endpoints.
func ServiceSlices(ctx context.Context, slices rest.Lister, service string, preferred discoveryv1.AddressType) ([]discoveryv1.EndpointSlice, error) {
	list, err := slices.List(ctx, &metainternalversion.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})})
	if err != nil {
		return nil, err
	}
	out := make([]discoveryv1.EndpointSlice, len(list.Items))
	for i, item := range list.Items {
		if err := item.Decode(&out[i]); err != nil {
			return nil, err
		}
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	sort.SliceStable(out, func(i, j int) bool { return out[i].AddressType == preferred && out[j].AddressType != preferred })
	return out, nil
}

// RandomEndpoint is the host:port of a ready endpoint with an address,
// chosen from a random start, of the first slice serving the named port;
// accept, when set, may refuse an endpoint. It is "" when there is none.
func RandomEndpoint(slices []discoveryv1.EndpointSlice, portName string, accept func(*discoveryv1.Endpoint) bool) string {
	for _, slice := range slices {
		for _, port := range slice.Ports {
			if port.Name == nil || *port.Name != portName || port.Port == nil || len(slice.Endpoints) == 0 {
				continue
			}
			offset := rand.IntN(len(slice.Endpoints))
			for i := range slice.Endpoints {
				ep := &slice.Endpoints[(i+offset)%len(slice.Endpoints)]
				if (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) || len(ep.Addresses) == 0 {
					continue
				}
				if accept != nil && !accept(ep) {
					continue
				}
				return net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(*port.Port)))
			}
		}
	}
	return ""
}
