// Package endpointslice serves the discovery.k8s.io group (v1): endpoint
// slices.
package endpointslice

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
	"github.com/miniapiserver/miniapiserver/pkg/registry/rest"
)

var endpointSliceDocs = discoveryv1.EndpointSlice{}.SwaggerDoc()

var endpointSlices = generic.Resource{
	Name: "endpointslices", Singular: "endpointslice", Kind: "EndpointSlice", Namespaced: true,
	New: generic.NewOf[discoveryv1.EndpointSlice], NewList: generic.NewOf[discoveryv1.EndpointSliceList],
	Strategy: endpointSliceStrategy{generic.BaseStrategy{Namespaced: true}},
	Table: generic.TableOf([]metav1.TableColumnDefinition{
		generic.NameColumn,
		{Name: "AddressType", Type: "string", Description: endpointSliceDocs["addressType"]},
		{Name: "Ports", Type: "string", Description: endpointSliceDocs["ports"]},
		{Name: "Endpoints", Type: "string", Description: endpointSliceDocs["endpoints"]},
		generic.AgeColumn,
	}, func(eps *discoveryv1.EndpointSlice) ([]interface{}, error) {
		var ports, addresses []string
		for _, p := range eps.Ports {
			switch {
			case p.Port != nil:
				ports = append(ports, strconv.Itoa(int(*p.Port)))
			case p.Name != nil:
				ports = append(ports, *p.Name)
			default:
				ports = append(ports, "*")
			}
		}
		for _, ep := range eps.Endpoints {
			addresses = append(addresses, ep.Addresses...)
		}
		return []interface{}{eps.Name, string(eps.AddressType), firstThree(ports), firstThree(addresses),
			generic.TranslateTimestampSince(eps.CreationTimestamp)}, nil
	}),
}

// firstThree is kube's cell of a list: its first three items and how many
// more, or "<unset>".
func firstThree(items []string) string {
	const max = 3
	switch {
	case len(items) == 0:
		return "<unset>"
	case len(items) > max:
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
	}
	return strings.Join(items, ",")
}

type endpointSliceStrategy struct{ generic.BaseStrategy }

var _ rest.Defaulter = endpointSliceStrategy{}

// Default implements rest.Defaulter: ports are unnamed and TCP unless
// they say otherwise.
func (endpointSliceStrategy) Default(obj runtime.Object) {
	eps := obj.(*discoveryv1.EndpointSlice)
	for i := range eps.Ports {
		p := &eps.Ports[i]
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
}

// PrepareForCreate drops the endpoints' deprecatedTopology, which v1
// clients may not set.
func (endpointSliceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	generic.StartGeneration(obj)
	dropDeprecatedTopology(obj.(*discoveryv1.EndpointSlice), nil)
}

// PrepareForUpdate bumps the generation when anything but metadata, or
// the labels, changed (counted before deprecatedTopology is dropped, as
// kube does).
func (endpointSliceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	eps, oldEPS := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	changed := eps.AddressType != oldEPS.AddressType || !apiequality.Semantic.DeepEqual(eps.Endpoints, oldEPS.Endpoints) ||
		!apiequality.Semantic.DeepEqual(eps.Ports, oldEPS.Ports) || !apiequality.Semantic.DeepEqual(eps.Labels, oldEPS.Labels)
	if changed {
		generic.BumpGeneration(obj, old)
	}
	dropDeprecatedTopology(eps, oldEPS)
}

// dropDeprecatedTopology clears the endpoints' deprecatedTopology unless
// an update leaves the endpoints as they were. An endpoint with no
// nodeName keeps the hostname of its topology as nodeName when old's
// endpoints named that node, as kube does for v1 clients.
func dropDeprecatedTopology(eps, old *discoveryv1.EndpointSlice) {
	if old != nil && apiequality.Semantic.DeepEqual(eps.Endpoints, old.Endpoints) {
		return
	}
	known := map[string]bool{}
	if old != nil {
		for _, ep := range old.Endpoints {
			if name := ep.DeprecatedTopology[corev1.LabelHostname]; name != "" {
				known[name] = true
			}
		}
	}
	for i := range eps.Endpoints {
		ep := &eps.Endpoints[i]
		name, ok := ep.DeprecatedTopology[corev1.LabelHostname]
		if ep.NodeName == nil && ok && known[name] && len(apivalidation.NameIsDNSSubdomain(name, false)) == 0 {
			ep.NodeName = &name
		}
		ep.DeprecatedTopology = nil
	}
}

// Canonicalize stores no endpoints or ports as null, never []: kube's
// protobuf storage does not tell them apart, and reads back null.
func (endpointSliceStrategy) Canonicalize(obj runtime.Object) {
	eps := obj.(*discoveryv1.EndpointSlice)
	if len(eps.Endpoints) == 0 {
		eps.Endpoints = nil
	}
	if len(eps.Ports) == 0 {
		eps.Ports = nil
	}
}

func (endpointSliceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateEndpointSlice(obj.(*discoveryv1.EndpointSlice), nil)
}

func (endpointSliceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validateEndpointSlice(obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice))
}

// WarningsOnCreate: FQDN slices are deprecated.
func (endpointSliceStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	if obj.(*discoveryv1.EndpointSlice).AddressType == discoveryv1.AddressTypeFQDN {
		return []string{"spec.addressType: FQDN endpoints are deprecated"}
	}
	return nil
}

// GroupStorage is what the server's wiring uses of the group besides its
// routes.
type GroupStorage struct {
	// EndpointSlices is the EndpointSlices' store: core's services/proxy,
	// the aggregator and the endpoint reconciler read or keep them.
	EndpointSlices *generic.Store
}

// NewRESTStorageProvider returns the provider of discovery.k8s.io.
func NewRESTStorageProvider() generic.GroupProvider[GroupStorage] {
	return generic.NewGroupProvider(discoveryv1.SchemeGroupVersion, func(s []*generic.Store) GroupStorage { return GroupStorage{EndpointSlices: s[0]} }, endpointSlices)
}
