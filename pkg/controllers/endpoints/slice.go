package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

// EndpointSlices is the endpoint slices' store.
type EndpointSlices interface {
	rest.Updater
	rest.GracefulDeleter
}

// errAddressType stops an update of the slice whose address type (which
// cannot change) is not the one wanted: the slice is replaced instead.
var errAddressType = errors.New("endpoints: the kubernetes endpoint slice changes address type")

// writeEndpointSlice keeps the EndpointSlice default/kubernetes beside
// the endpoints, as kube's EndpointsAdapter does on every reconcile: the
// mirroring controller skips these endpoints (skip-mirror), so no one
// else writes it. It writes only when the endpoints, ports or labels
// change, and replaces a slice of the other address type.
func (r *Reconciler) writeEndpointSlice(ctx context.Context, subsets []corev1.EndpointSubset) error {
	ctx = request.WithNamespace(ctx, metav1.NamespaceDefault)
	want := endpointSlice(subsets)
	update := func() error {
		_, _, err := r.slices.Update(ctx, serviceName, updateFunc(func(old runtime.Object) (runtime.Object, error) {
			cur := old.(*discoveryv1.EndpointSlice)
			if cur.AddressType != "" && cur.AddressType != want.AddressType {
				return nil, errAddressType
			}
			if cur.Name != "" && apiequality.Semantic.DeepEqual(cur.Endpoints, want.Endpoints) &&
				apiequality.Semantic.DeepEqual(cur.Ports, want.Ports) && apiequality.Semantic.DeepEqual(cur.Labels, want.Labels) {
				return cur, nil
			}
			next := cur.DeepCopy()
			next.Name, next.Namespace = want.Name, want.Namespace
			next.Labels, next.AddressType, next.Endpoints, next.Ports = want.Labels, want.AddressType, want.Endpoints, want.Ports
			return next, nil
		}), nil, nil, true, &metav1.UpdateOptions{})
		return err
	}
	err := update()
	if errors.Is(err, errAddressType) {
		if _, _, err = r.slices.Delete(ctx, serviceName, nil, &metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			err = update()
		}
	}
	if err != nil {
		return fmt.Errorf("writing the endpoint slice of the kubernetes service: %w", err)
	}
	return nil
}

// endpointSlice is the slice kube's EndpointsAdapter derives from
// endpoints (endpointSliceFromEndpoints): named after the service, with
// only the service-name label, IPv4 unless every address is IPv6, the
// first subset's ports and its addresses (ready) of that family.
func endpointSlice(subsets []corev1.EndpointSubset) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: serviceName, Namespace: metav1.NamespaceDefault, Labels: map[string]string{discoveryv1.LabelServiceName: serviceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	if len(subsets) == 0 {
		return slice
	}
	subset := subsets[0]
	for _, p := range subset.Ports {
		slice.Ports = append(slice.Ports, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol})
	}
	all := append(append([]corev1.EndpointAddress{}, subset.Addresses...), subset.NotReadyAddresses...)
	if allIPv6(all) {
		slice.AddressType = discoveryv1.AddressTypeIPv6
	}
	slice.Endpoints = []discoveryv1.Endpoint{}
	for _, group := range []struct {
		addresses []corev1.EndpointAddress
		ready     bool
	}{{subset.Addresses, true}, {subset.NotReadyAddresses, false}} {
		for _, a := range group.addresses {
			if isIPv6(a.IP) != (slice.AddressType == discoveryv1.AddressTypeIPv6) {
				continue
			}
			ready := group.ready
			slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
				Addresses: []string{a.IP}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef: a.TargetRef, NodeName: a.NodeName,
			})
		}
	}
	return slice
}

func allIPv6(addresses []corev1.EndpointAddress) bool {
	for _, a := range addresses {
		if !isIPv6(a.IP) {
			return false
		}
	}
	return len(addresses) > 0
}

func isIPv6(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Is6() && !a.Is4In6()
}
