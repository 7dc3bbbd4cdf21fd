package resource

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The checks of a ResourceSlice, as a driver publishes it. old is the
// slice before an update (nil on create).
func validateSliceSpec(spec, old *resourcev1.ResourceSliceSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateDriverName(spec.Driver, fldPath.Child("driver"))
	allErrs = append(allErrs, validatePoolName(spec.Pool.Name, fldPath.Child("pool", "name"))...)
	if spec.Pool.ResourceSliceCount <= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("pool", "resourceSliceCount"), spec.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if spec.Pool.Generation < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("pool", "generation"), spec.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		allErrs = append(allErrs, immutable(spec.Pool.Name, old.Pool.Name, fldPath.Child("pool", "name"))...)
		allErrs = append(allErrs, immutable(spec.Driver, old.Driver, fldPath.Child("driver"))...)
		allErrs = append(allErrs, immutable(spec.NodeName, old.NodeName, fldPath.Child("nodeName"))...)
	}
	allErrs = append(allErrs, validateSliceNodes(spec, fldPath)...)
	if spec.SharedCounters != nil && spec.Devices != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	maxDevices := resourcev1.ResourceSliceMaxDevices
	if usesAdvancedFeatures(spec) {
		maxDevices = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
	}
	allErrs = append(allErrs, validateSet(spec.Devices, maxDevices, func(d resourcev1.Device, fldPath *field.Path) field.ErrorList {
		return validateDevice(d, lookupDevice(old, d.Name), fldPath, spec.PerDeviceNodeSelection)
	}, func(d resourcev1.Device) string { return d.Name }, fldPath.Child("devices"))...)
	return append(allErrs, validateSet(spec.SharedCounters, resourcev1.ResourceSliceMaxCounterSets, validateCounterSet,
		func(c resourcev1.CounterSet) string { return c.Name }, fldPath.Child("sharedCounters"), sizeCovered, uniquenessCovered)...)
}

func immutable(value, old any, fldPath *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(value, old) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, value, "field is immutable")}
}

// validateSliceNodes: exactly one of nodeName, nodeSelector, allNodes,
// perDeviceNodeSelection says where the slice's devices are.
func validateSliceNodes(spec *resourcev1.ResourceSliceSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	var set []string
	if spec.NodeName != nil {
		if *spec.NodeName != "" {
			set = append(set, "`nodeName`")
			allErrs = append(allErrs, validateNodeName(*spec.NodeName, fldPath.Child("nodeName"))...)
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), "", "must be either unset or set to a non-empty string"))
		}
	}
	if spec.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		allErrs = append(allErrs, corevalidation.ValidateNodeSelector(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
		if len(spec.NodeSelector.NodeSelectorTerms) != 1 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeSelector", "nodeSelectorTerms"), corevalidation.InternalValue(spec.NodeSelector.NodeSelectorTerms), "must have exactly one node selector term"))
		}
	}
	allErrs = append(allErrs, trueOrUnset(spec.AllNodes, "`allNodes`", &set, fldPath.Child("allNodes"))...)
	allErrs = append(allErrs, trueOrUnset(spec.PerDeviceNodeSelection, "`perDeviceNodeSelection`", &set, fldPath.Child("perDeviceNodeSelection"))...)
	const msg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	return append(allErrs, exactlyOne(set, fldPath, msg, msg+", but multiple fields are set")...)
}

// exactlyOne reports that none or several of the fields named in set are
// set, with kube's messages for either.
func exactlyOne(set []string, fldPath *field.Path, noneMsg, severalMsg string) field.ErrorList {
	switch len(set) {
	case 0:
		return field.ErrorList{field.Required(fldPath, noneMsg)}
	case 1:
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, fmt.Sprintf("{%s}", strings.Join(set, ", ")), severalMsg)}
}

// trueOrUnset checks a flag that is either unset or true, and adds name
// to set when it is true.
func trueOrUnset(flag *bool, name string, set *[]string, fldPath *field.Path) field.ErrorList {
	if flag == nil {
		return nil
	}
	if !*flag {
		return field.ErrorList{field.Invalid(fldPath, false, "must be either unset or set to true")}
	}
	*set = append(*set, name)
	return nil
}

func validateNodeName(name string, fldPath *field.Path) field.ErrorList {
	return corevalidation.ValidateDNS1123Subdomain(name, fldPath)
}

// usesAdvancedFeatures: taints, counters or list attributes lower the
// number of devices a slice may hold.
func usesAdvancedFeatures(spec *resourcev1.ResourceSliceSpec) bool {
	return anyDevice(spec, func(d *resourcev1.Device) bool {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			return true
		}
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
		return false
	})
}

func lookupDevice(spec *resourcev1.ResourceSliceSpec, name string) *resourcev1.Device {
	if spec == nil {
		return nil
	}
	for i := range spec.Devices {
		if spec.Devices[i].Name == name {
			return &spec.Devices[i]
		}
	}
	return nil
}

// attributeKeyMaxLength is the longest attribute or capacity name:
// a domain, a slash, an identifier.
const attributeKeyMaxLength = resourcev1.DeviceMaxDomainLength + 1 + resourcev1.DeviceMaxIDLength

func validateDevice(d resourcev1.Device, old *resourcev1.Device, fldPath *field.Path, perDeviceNodeSelection *bool) field.ErrorList {
	allErrs := corevalidation.ValidateDNS1123Label(d.Name, fldPath.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		allErrs = append(allErrs, field.Invalid(fldPath, n, fmt.Sprintf("the total number of attributes and capacities must not exceed %d", resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice)))
	}
	allErrs = append(allErrs, validateMap(d.Attributes, -1, attributeKeyMaxLength, validateQualifiedName, validateDeviceAttribute, fldPath.Child("attributes"))...)
	// Unchanged capacity and taints were valid when stored.
	if old == nil || !apiequality.Semantic.DeepEqual(old.Capacity, d.Capacity) {
		multi := d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations
		allErrs = append(allErrs, validateMap(d.Capacity, -1, attributeKeyMaxLength, validateQualifiedName, func(c resourcev1.DeviceCapacity, fldPath *field.Path) field.ErrorList {
			return validateCapacity(c, multi, fldPath)
		}, fldPath.Child("capacity"))...)
	}
	// Counters before taints: kube's declarative errors come in the
	// order of the fields (a counter's errors are all declarative but a
	// map's size).
	allErrs = append(allErrs, validateSet(d.ConsumesCounters, resourcev1.ResourceSliceMaxDeviceCounterConsumptionsPerDevice, validateCounterConsumption,
		func(c resourcev1.DeviceCounterConsumption) string { return c.CounterSet }, fldPath.Child("consumesCounters"), sizeCovered, uniquenessCovered)...)
	if old == nil || !apiequality.Semantic.DeepEqual(old.Taints, d.Taints) {
		allErrs = append(allErrs, validateSlice(d.Taints, resourcev1.DeviceTaintsMaxLength, func(t resourcev1.DeviceTaint, fldPath *field.Path) field.ErrorList {
			return validateDeviceTaint(t, nil, fldPath)
		}, fldPath.Child("taints"))...)
	}
	allErrs = append(allErrs, validateDeviceNodes(d, fldPath, perDeviceNodeSelection)...)
	return append(allErrs, validateBindingConditions(d.BindingConditions, d.BindingFailureConditions, fldPath)...)
}

// validateDeviceNodes: with perDeviceNodeSelection, each device says
// where it is (exactly one of nodeName, nodeSelector, allNodes); without,
// none does.
func validateDeviceNodes(d resourcev1.Device, fldPath *field.Path, perDeviceNodeSelection *bool) field.ErrorList {
	if perDeviceNodeSelection == nil || !*perDeviceNodeSelection {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(fldPath, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var allErrs field.ErrorList
	var set []string
	if d.NodeName != nil {
		if *d.NodeName != "" {
			set = append(set, "`nodeName`")
			allErrs = append(allErrs, validateNodeName(*d.NodeName, fldPath.Child("nodeName"))...)
		} else {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("nodeName"), "", "must not be empty"))
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		allErrs = append(allErrs, corevalidation.ValidateNodeSelector(d.NodeSelector, fldPath.Child("nodeSelector"))...)
	}
	allErrs = append(allErrs, trueOrUnset(d.AllNodes, "`allNodes`", &set, fldPath.Child("allNodes"))...)
	const msg = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
	return append(allErrs, exactlyOne(set, fldPath, msg, msg)...)
}

// semver is semver.org 2.0.0's grammar (compiled on first use).
var semver = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
		`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)
})

// attributeUnion is the declarative rule that an attribute has exactly
// one value.
var attributeUnion = validate.NewUnionMembership(
	validate.NewUnionMember("int"), validate.NewUnionMember("bool"), validate.NewUnionMember("string"), validate.NewUnionMember("version"),
	validate.NewUnionMember("ints"), validate.NewUnionMember("bools"), validate.NewUnionMember("strings"), validate.NewUnionMember("versions"))

func validateDeviceAttribute(a resourcev1.DeviceAttribute, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if a.StringValue != nil && len(*a.StringValue) > resourcev1.DeviceAttributeMaxValueLength {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("string"), "", resourcev1.DeviceAttributeMaxValueLength))
	}
	if v := a.VersionValue; v != nil {
		if !semver().MatchString(*v) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("version"), *v, "must be a string compatible with semver.org spec 2.0.0"))
		}
		if len(*v) > resourcev1.DeviceAttributeMaxValueLength {
			allErrs = append(allErrs, field.TooLong(fldPath.Child("version"), "", resourcev1.DeviceAttributeMaxValueLength))
		}
	}
	// List values are dropped (DRAListTypeAttributes is off by default).
	return append(allErrs, declarative(validate.Union(dvCtx, create, fldPath, &a, nil, attributeUnion,
		func(a *resourcev1.DeviceAttribute) bool { return a.IntValue != nil },
		func(a *resourcev1.DeviceAttribute) bool { return a.BoolValue != nil },
		func(a *resourcev1.DeviceAttribute) bool { return a.StringValue != nil },
		func(a *resourcev1.DeviceAttribute) bool { return a.VersionValue != nil },
		func(a *resourcev1.DeviceAttribute) bool { return len(a.IntValues) != 0 },
		func(a *resourcev1.DeviceAttribute) bool { return len(a.BoolValues) != 0 },
		func(a *resourcev1.DeviceAttribute) bool { return len(a.StringValues) != 0 },
		func(a *resourcev1.DeviceAttribute) bool { return len(a.VersionValues) != 0 },
	))...)
}

func validateCounterSet(c resourcev1.CounterSet, fldPath *field.Path) field.ErrorList {
	allErrs := declarativeRequiredName(c.Name, validate.ShortName[string], fldPath.Child("name"))
	return append(allErrs, validateCounters(c.Counters, resourcev1.ResourceSliceMaxCountersPerCounterSet, fldPath.Child("counters"))...)
}

func validateCounterConsumption(c resourcev1.DeviceCounterConsumption, fldPath *field.Path) field.ErrorList {
	allErrs := declarativeRequiredName(c.CounterSet, validate.ShortName[string], fldPath.Child("counterSet"))
	return append(allErrs, validateCounters(c.Counters, resourcev1.ResourceSliceMaxCountersPerDeviceCounterConsumption, fldPath.Child("counters"))...)
}

// validateCounters: required, at most max, each named by a DNS label.
func validateCounters(counters map[string]resourcev1.Counter, max int, fldPath *field.Path) field.ErrorList {
	if len(counters) == 0 {
		return declarative(field.ErrorList{field.Required(fldPath, "")})
	}
	return validateMap(counters, max, 63, func(name string, fldPath *field.Path) field.ErrorList {
		return validate.ShortName(dvCtx, create, fldPath, &name, nil)
	}, func(resourcev1.Counter, *field.Path) field.ErrorList { return nil }, fldPath, keysCovered)
}
