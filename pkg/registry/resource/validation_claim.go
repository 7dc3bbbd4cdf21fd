package resource

import (
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The checks of a claim's spec (shared by claims and claim templates).

func validateClaimSpec(spec *resourcev1.ResourceClaimSpec, fldPath *field.Path) field.ErrorList {
	claim := &spec.Devices
	path := fldPath.Child("devices")
	names := gatherRequestNames(claim)
	allErrs := validateSet(claim.Requests, resourcev1.DeviceRequestsMaxSize, validateDeviceRequest,
		func(r resourcev1.DeviceRequest) string { return r.Name }, path.Child("requests"), sizeCovered, uniquenessCovered)
	allErrs = append(allErrs, validateSlice(claim.Constraints, resourcev1.DeviceConstraintsMaxSize,
		func(c resourcev1.DeviceConstraint, fldPath *field.Path) field.ErrorList {
			return validateDeviceConstraint(c, fldPath, names)
		}, path.Child("constraints"), sizeCovered)...)
	allErrs = append(allErrs, validateSlice(claim.Config, resourcev1.DeviceConfigMaxSize,
		func(c resourcev1.DeviceClaimConfiguration, fldPath *field.Path) field.ErrorList {
			errs := validateRequestRefs(c.Requests, fldPath.Child("requests"), names)
			return append(errs, validateDeviceConfiguration(c.DeviceConfiguration, fldPath, false)...)
		}, path.Child("config"), sizeCovered)...)
	return allErrs
}

// requestNames are a claim's request names, each with the names of its
// sub-requests (nil for an exact request).
type requestNames map[string]sets.Set[string]

func gatherRequestNames(claim *resourcev1.DeviceClaim) requestNames {
	names := requestNames{}
	for _, r := range claim.Requests {
		var subs sets.Set[string]
		if len(r.FirstAvailable) > 0 {
			subs = sets.New[string]()
			for _, sub := range r.FirstAvailable {
				subs.Insert(sub.Name)
			}
		}
		names[r.Name] = subs
	}
	return names
}

// has reports whether ref names a request, or a request and one of its
// sub-requests ("request/sub").
func (n requestNames) has(ref string) bool {
	request, sub, isSub := strings.Cut(ref, "/")
	subs, ok := n[request]
	if !ok || strings.Contains(sub, "/") {
		return false
	}
	return !isSub || subs.Has(sub)
}

func validateDeviceRequest(r resourcev1.DeviceRequest, fldPath *field.Path) field.ErrorList {
	allErrs := corevalidation.ValidateDNS1123Label(r.Name, fldPath.Child("name"))
	switch hasExactly, hasFirst := r.Exactly != nil, len(r.FirstAvailable) > 0; {
	case !hasExactly && !hasFirst:
		allErrs = append(allErrs, field.Required(fldPath, "exactly one of `exactly` or `firstAvailable` is required"))
	case hasExactly && hasFirst:
		allErrs = append(allErrs, field.Invalid(fldPath, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case hasFirst:
		allErrs = append(allErrs, validateSet(r.FirstAvailable, resourcev1.FirstAvailableDeviceRequestMaxSize, validateDeviceSubRequest,
			func(sub resourcev1.DeviceSubRequest) string { return sub.Name }, fldPath.Child("firstAvailable"), sizeCovered, uniquenessCovered)...)
	default:
		allErrs = append(allErrs, validateExactDeviceRequest(*r.Exactly, fldPath.Child("exactly"))...)
	}
	return allErrs
}

func validateDeviceSubRequest(sub resourcev1.DeviceSubRequest, fldPath *field.Path) field.ErrorList {
	allErrs := corevalidation.ValidateDNS1123Label(sub.Name, fldPath.Child("name"))
	allErrs = append(allErrs, declarativeRequiredName(sub.DeviceClassName, validate.LongName[string], fldPath.Child("deviceClassName"))...)
	allErrs = append(allErrs, validateSelectors(sub.Selectors, fldPath.Child("selectors"), false)...)
	allErrs = append(allErrs, validateAllocationMode(sub.AllocationMode, sub.Count, fldPath)...)
	for i, t := range sub.Tolerations {
		allErrs = append(allErrs, validateDeviceToleration(t, fldPath.Child("tolerations").Index(i))...)
	}
	return allErrs
}

func validateExactDeviceRequest(r resourcev1.ExactDeviceRequest, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if r.DeviceClassName == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("deviceClassName"), ""))
	} else {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(r.DeviceClassName, fldPath.Child("deviceClassName"))...)
	}
	allErrs = append(allErrs, validateSelectors(r.Selectors, fldPath.Child("selectors"), false)...)
	allErrs = append(allErrs, validateAllocationMode(r.AllocationMode, r.Count, fldPath)...)
	for i, t := range r.Tolerations {
		allErrs = append(allErrs, validateDeviceToleration(t, fldPath.Child("tolerations").Index(i))...)
	}
	return allErrs
}

var allocationModes = sets.New(resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount)

func validateAllocationMode(mode resourcev1.DeviceAllocationMode, count int64, fldPath *field.Path) field.ErrorList {
	countPath := fldPath.Child("count")
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(countPath, count, "must not be specified when allocationMode is 'All'")}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(countPath, count, "must be greater than zero")}
		}
	case "":
		// Defaulting never leaves it empty; kube's handwritten check answers.
		return field.ErrorList{field.NotSupported(fldPath.Child("allocationMode"), mode, sets.List(allocationModes))}
	default:
		return declarative(validate.Enum(dvCtx, create, fldPath.Child("allocationMode"), &mode, nil, allocationModes, nil))
	}
	return nil
}

func validateDeviceConstraint(c resourcev1.DeviceConstraint, fldPath *field.Path, names requestNames) field.ErrorList {
	allErrs := validateRequestRefs(c.Requests, fldPath.Child("requests"), names)
	switch {
	case c.MatchAttribute != nil:
		allErrs = append(allErrs, declarative(validate.ResourceFullyQualifiedName(dvCtx, create, fldPath.Child("matchAttribute"), c.MatchAttribute, nil))...)
	case c.DistinctAttribute != nil:
		allErrs = append(allErrs, declarative(validate.ResourceFullyQualifiedName(dvCtx, create, fldPath.Child("distinctAttribute"), c.DistinctAttribute, nil))...)
	default:
		// kube's message, as it is.
		allErrs = append(allErrs, field.Required(fldPath, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	}
	return allErrs
}

// validateRequestRefs checks a list of references to requests.
func validateRequestRefs(refs []string, fldPath *field.Path, names requestNames) field.ErrorList {
	return validateSet(refs, resourcev1.DeviceRequestsMaxSize, func(ref string, fldPath *field.Path) field.ErrorList {
		return validateRequestRef(ref, fldPath, names)
	}, stringKey, fldPath, sizeCovered, uniquenessCovered)
}

// validateRequestRef checks a reference to a request of the claim:
// "request", or "request/sub-request".
func validateRequestRef(ref string, fldPath *field.Path, names requestNames) field.ErrorList {
	const msg = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
	segments := strings.Split(ref, "/")
	if len(segments) > 2 {
		return field.ErrorList{field.Invalid(fldPath, ref, msg)}
	}
	var allErrs field.ErrorList
	for _, s := range segments {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(s, fldPath)...)
	}
	if !names.has(ref) {
		allErrs = append(allErrs, field.Invalid(fldPath, ref, msg))
	}
	return allErrs
}
