package core

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	"github.com/miniapiserver/miniapiserver/pkg/registry/generic"
)

var endpoints = generic.Resource{
	Name: "endpoints", Singular: "endpoints", Kind: "Endpoints", Namespaced: true,
	ShortNames: []string{"ep"},
	New:        generic.NewOf[corev1.Endpoints],
	NewList:    generic.NewOf[corev1.EndpointsList],
	Strategy:   endpointsStrategy{generic.NewWarningStrategy(true, endpointsWarnings)},
	Table: generic.NameValueAgeTable(metav1.TableColumnDefinition{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		func(ep *corev1.Endpoints) interface{} { return formatEndpoints(ep) }),
}

// endpointsStrategy: endpoints may be created by PUT (kube's endpoints
// controller does).
type endpointsStrategy struct {
	generic.WarningStrategy[*corev1.Endpoints]
}

func (endpointsStrategy) AllowCreateOnUpdate() bool { return true }

// Default gives each port a protocol.
func (endpointsStrategy) Default(obj runtime.Object) {
	ep := obj.(*corev1.Endpoints)
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if ep.Subsets[i].Ports[j].Protocol == "" {
				ep.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

func (endpointsStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateEndpoints(obj.(*corev1.Endpoints), nil)
}

func (endpointsStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	ep, oldEP := obj.(*corev1.Endpoints), old.(*corev1.Endpoints)
	allErrs := corevalidation.ValidateObjectMetaUpdate(&ep.ObjectMeta, &oldEP.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateEndpoints(ep, oldEP)...)
}

// endpointsWarnings flags addresses in a non-canonical form, except in the
// endpoints kube's own controller writes.
func endpointsWarnings(ep *corev1.Endpoints) []string {
	if ep.Labels["endpoints.kubernetes.io/managed-by"] == "endpoint-controller" {
		return nil
	}
	var warnings []string
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Addresses {
			p := field.NewPath("subsets").Index(i).Child("addresses").Index(j).Child("ip")
			warnings = append(warnings, validation.GetWarningsForIP(p, ep.Subsets[i].Addresses[j].IP)...)
		}
		for j := range ep.Subsets[i].NotReadyAddresses {
			p := field.NewPath("subsets").Index(i).Child("notReadyAddresses").Index(j).Child("ip")
			warnings = append(warnings, validation.GetWarningsForIP(p, ep.Subsets[i].NotReadyAddresses[j].IP)...)
		}
	}
	return warnings
}

func validateEndpoints(ep, old *corev1.Endpoints) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&ep.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	subsetErrs := validateEndpointSubsets(ep.Subsets, field.NewPath("subsets"))
	// Subsets stored by an older, laxer server stay acceptable unchanged.
	if len(subsetErrs) != 0 && old != nil && apiequality.Semantic.DeepEqual(old.Subsets, ep.Subsets) {
		subsetErrs = nil
	}
	return append(allErrs, subsetErrs...)
}

func validateEndpointSubsets(subsets []corev1.EndpointSubset, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i := range subsets {
		ss := &subsets[i]
		idxPath := fldPath.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			allErrs = append(allErrs, field.Required(idxPath, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.Addresses[j], idxPath.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			allErrs = append(allErrs, validateEndpointAddress(&ss.NotReadyAddresses[j], idxPath.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			allErrs = append(allErrs, validateEndpointPort(&ss.Ports[j], len(ss.Ports) > 1, idxPath.Child("ports").Index(j))...)
		}
	}
	return allErrs
}

func validateEndpointAddress(address *corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	allErrs := validation.IsValidIPForLegacyField(fldPath.Child("ip"), address.IP, true, nil)
	if address.Hostname != "" {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(address.Hostname, fldPath.Child("hostname"))...)
	}
	if address.NodeName != nil {
		for _, msg := range apivalidation.NameIsDNSSubdomain(*address.NodeName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), *address.NodeName, msg))
		}
	}
	return append(allErrs, corevalidation.ValidateEndpointIP(address.IP, fldPath.Child("ip"))...)
}

func validateEndpointPort(port *corev1.EndpointPort, requireName bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if requireName && port.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	} else if port.Name != "" {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(port.Name, fldPath.Child("name"))...)
	}
	allErrs = append(allErrs, corevalidation.ValidatePortNum(port.Port, fldPath.Child("port"))...)
	allErrs = append(allErrs, corevalidation.ValidateProtocol(port.Protocol, fldPath.Child("protocol"))...)
	if port.AppProtocol != nil {
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(*port.AppProtocol, fldPath.Child("appProtocol"))...)
	}
	return allErrs
}

// formatEndpoints is kube's ENDPOINTS column: up to three ip:port, then
// how many more.
func formatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	const maxShown = 3
	var list []string
	more, count := false, 0
	add := func(s string) {
		if len(list) == maxShown {
			more = true
			return
		}
		list = append(list, s)
	}
	for i := range ep.Subsets {
		ss := &ep.Subsets[i]
		if len(ss.Ports) == 0 {
			// Headless services may have endpoints without ports.
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, port := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(port.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-maxShown)
	}
	return ret
}
