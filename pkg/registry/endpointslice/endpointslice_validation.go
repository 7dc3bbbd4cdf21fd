package endpointslice

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// kube's limits.
const (
	maxAddresses = 100
	maxPorts     = 20000
	maxEndpoints = 1000
	maxZoneHints = 8
	maxNodeHints = 8
)

var (
	addressTypes      = []string{string(discoveryv1.AddressTypeFQDN), string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6)}
	endpointProtocols = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	validateNodeName  = apivalidation.NameIsDNSSubdomain
	validateSliceName = apivalidation.NameIsDNSSubdomain
	addressTypePath   = field.NewPath("addressType")
)

// validateEndpointSlice validates eps, created (old nil) or updated from
// old: the handwritten rules, then those kube 1.37 declares on the API
// type (addressType required, supported and immutable; each endpoint's
// addresses between 1 and 100), which come last and without detail.
func validateEndpointSlice(eps, old *discoveryv1.EndpointSlice) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMeta(&eps.ObjectMeta, true, validateSliceName, field.NewPath("metadata"))
	allErrs = append(allErrs, validatePorts(eps.Ports, field.NewPath("ports"))...)
	endpointErrs := validateEndpoints(eps.Endpoints, eps.AddressType, field.NewPath("endpoints"))
	// Endpoints an update leaves as they were stay valid: older servers
	// accepted them.
	if len(endpointErrs) > 0 && old != nil && apiequality.Semantic.DeepEqual(eps.Endpoints, old.Endpoints) {
		endpointErrs = nil
	}
	allErrs = append(allErrs, endpointErrs...)
	return append(allErrs, declarativeEndpointSlice(eps, old)...)
}

func declarativeEndpointSlice(eps, old *discoveryv1.EndpointSlice) field.ErrorList {
	var allErrs field.ErrorList
	if old == nil || eps.AddressType != old.AddressType {
		switch {
		case eps.AddressType == "":
			allErrs = append(allErrs, field.Required(addressTypePath, ""))
		case old != nil:
			allErrs = append(allErrs, field.Invalid(addressTypePath, nil, apivalidation.FieldImmutableErrorMsg))
		case !slices.Contains(addressTypes, string(eps.AddressType)):
			allErrs = append(allErrs, field.NotSupported(addressTypePath, eps.AddressType, addressTypes))
		}
	}
	if old != nil && apiequality.Semantic.DeepEqual(eps.Endpoints, old.Endpoints) {
		return allErrs
	}
	for i, ep := range eps.Endpoints {
		p := field.NewPath("endpoints").Index(i).Child("addresses")
		switch {
		case len(ep.Addresses) == 0:
			allErrs = append(allErrs, field.Required(p, ""))
		case len(ep.Addresses) > maxAddresses:
			allErrs = append(allErrs, field.TooMany(p, len(ep.Addresses), maxAddresses))
		}
	}
	return allErrs
}

func validatePorts(ports []discoveryv1.EndpointPort, fldPath *field.Path) field.ErrorList {
	if len(ports) > maxPorts {
		return field.ErrorList{field.TooMany(fldPath, len(ports), maxPorts)}
	}
	var allErrs field.ErrorList
	names := make([]string, 0, len(ports))
	for i, port := range ports {
		p := fldPath.Index(i)
		// Defaulted: never nil here.
		name := *port.Name
		if name != "" {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(name, p.Child("name"))...)
		}
		if slices.Contains(names, name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), name))
		} else {
			names = append(names, name)
		}
		switch {
		case port.Protocol == nil:
			allErrs = append(allErrs, field.Required(p.Child("protocol"), ""))
		case !slices.Contains(endpointProtocols, string(*port.Protocol)):
			allErrs = append(allErrs, field.NotSupported(p.Child("protocol"), *port.Protocol, endpointProtocols))
		}
		if port.AppProtocol != nil {
			allErrs = append(allErrs, corevalidation.ValidateQualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
		}
	}
	return allErrs
}

func validateEndpoints(endpoints []discoveryv1.Endpoint, addressType discoveryv1.AddressType, fldPath *field.Path) field.ErrorList {
	if len(endpoints) > maxEndpoints {
		return field.ErrorList{field.TooMany(fldPath, len(endpoints), maxEndpoints)}
	}
	var allErrs field.ErrorList
	for i := range endpoints {
		ep := &endpoints[i]
		p := fldPath.Index(i)
		for j, address := range ep.Addresses {
			allErrs = append(allErrs, validateAddress(address, addressType, p.Child("addresses"), j)...)
		}
		if ep.NodeName != nil {
			for _, msg := range validateNodeName(*ep.NodeName, false) {
				allErrs = append(allErrs, field.Invalid(p.Child("nodeName"), *ep.NodeName, msg))
			}
		}
		// deprecatedTopology is never validated: a v1 write drops it.
		if ep.Hostname != nil {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(*ep.Hostname, p.Child("hostname"))...)
		}
		if ep.Hints != nil {
			allErrs = append(allErrs, validateHints(ep.Hints, p.Child("hints"))...)
		}
	}
	return allErrs
}

// validateAddress checks the i-th address of an endpoint against the
// slice's type (an unknown type checks nothing). kube reports a family
// mismatch on the addresses, not on the address.
func validateAddress(address string, addressType discoveryv1.AddressType, addressesPath *field.Path, i int) field.ErrorList {
	p := addressesPath.Index(i)
	switch addressType {
	case discoveryv1.AddressTypeIPv4:
		return validateIPOfFamily(address, validation.IsValidIPForLegacyField(p, address, true, nil), netutils.IsIPv4String,
			"must be an IPv4 address", addressesPath, p)
	case discoveryv1.AddressTypeIPv6:
		return validateIPOfFamily(address, validation.IsValidIP(p, address), netutils.IsIPv6String,
			"must be an IPv6 address", addressesPath, p)
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(p, address)
	}
	return nil
}

// validateIPOfFamily: an address without format errors (formatErrs) must
// be of the slice's family and not of a range no endpoint may use.
func validateIPOfFamily(address string, formatErrs field.ErrorList, ofFamily func(string) bool, notOfFamily string,
	addressesPath, p *field.Path) field.ErrorList {
	if len(formatErrs) > 0 {
		return formatErrs
	}
	var allErrs field.ErrorList
	if !ofFamily(address) {
		allErrs = append(allErrs, field.Invalid(addressesPath, address, notOfFamily))
	}
	return append(allErrs, corevalidation.ValidateEndpointIP(address, p)...)
}

// validateHints checks an endpoint's zone and node hints: at most 8 of
// each, unique, valid names.
func validateHints(hints *discoveryv1.EndpointHints, fldPath *field.Path) field.ErrorList {
	zones := make([]string, len(hints.ForZones))
	for i, z := range hints.ForZones {
		zones[i] = z.Name
	}
	allErrs, ok := validateHintNames(zones, maxZoneHints, fldPath.Child("forZones"), validation.IsValidLabelValue)
	if !ok {
		return allErrs
	}
	nodes := make([]string, len(hints.ForNodes))
	for i, n := range hints.ForNodes {
		nodes[i] = n.Name
	}
	errs, _ := validateHintNames(nodes, maxNodeHints, fldPath.Child("forNodes"), func(name string) []string { return validateNodeName(name, false) })
	return append(allErrs, errs...)
}

// validateHintNames checks the names of hints of one kind; ok is false
// when there are too many to look at.
func validateHintNames(names []string, max int, fldPath *field.Path, check func(string) []string) (allErrs field.ErrorList, ok bool) {
	if len(names) > max {
		return field.ErrorList{field.TooMany(fldPath, len(names), max)}, false
	}
	for i, name := range names {
		p := fldPath.Index(i).Child("name")
		if slices.Contains(names[:i], name) {
			allErrs = append(allErrs, field.Duplicate(p, name))
		}
		for _, msg := range check(name) {
			allErrs = append(allErrs, field.Invalid(p, name, msg))
		}
	}
	return allErrs, true
}
