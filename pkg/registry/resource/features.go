package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// Fields of features kube 1.37 leaves off by default (DRADerivedAttributes,
// DRAListTypeAttributes, DRANodeAllocatableResources,
// DRAPartitionableDevicesType, DRAOptionalNodeOperations,
// DRADeviceCompatibilityGroups) are dropped on the way in, unless the
// stored object uses them already, as kube's strategies do. Every other
// field of v1 belongs to a feature on by default.

// dropDisabledClaimFields drops the derived attributes of a claim's (or
// template's) requests.
func dropDisabledClaimFields(spec, old *resourcev1.ResourceClaimSpec) {
	if old != nil && derivedAttributesInUse(old) {
		return
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if r.Exactly != nil {
			r.Exactly.DerivedAttributes = nil
		}
		for j := range r.FirstAvailable {
			r.FirstAvailable[j].DerivedAttributes = nil
		}
	}
}

func derivedAttributesInUse(spec *resourcev1.ResourceClaimSpec) bool {
	for _, r := range spec.Devices.Requests {
		if r.Exactly != nil && len(r.Exactly.DerivedAttributes) > 0 {
			return true
		}
		for _, sub := range r.FirstAvailable {
			if len(sub.DerivedAttributes) > 0 {
				return true
			}
		}
	}
	return false
}

// dropDisabledAllocationFields drops an allocation's skipNodeOperations.
func dropDisabledAllocationFields(status, old *resourcev1.ResourceClaimStatus) {
	if status.Allocation == nil || skipNodeOperationsInUse(old) {
		return
	}
	for i := range status.Allocation.Devices.Results {
		status.Allocation.Devices.Results[i].SkipNodeOperations = nil
	}
}

func skipNodeOperationsInUse(status *resourcev1.ResourceClaimStatus) bool {
	if status == nil || status.Allocation == nil {
		return false
	}
	for _, r := range status.Allocation.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}

// dropDisabledSliceFields drops what a slice may not use yet, each
// feature on its own, as kube does.
func dropDisabledSliceFields(spec, old *resourcev1.ResourceSliceSpec) {
	if !sliceUses(old, func(s *resourcev1.ResourceSliceSpec) bool { return s.PartitionTypeAttribute != nil }) {
		spec.PartitionTypeAttribute = nil
	}
	if !sliceUses(old, func(s *resourcev1.ResourceSliceSpec) bool { return len(s.SkipNodeOperations) > 0 }) {
		spec.SkipNodeOperations = nil
	}
	dropDevices := func(inUse func(d *resourcev1.Device) bool, drop func(d *resourcev1.Device)) {
		if anyDevice(old, inUse) {
			return
		}
		for i := range spec.Devices {
			drop(&spec.Devices[i])
		}
	}
	dropDevices(func(d *resourcev1.Device) bool { return len(d.NodeAllocatableResources) > 0 },
		func(d *resourcev1.Device) { d.NodeAllocatableResources = nil })
	dropDevices(func(d *resourcev1.Device) bool {
		for _, c := range d.ConsumesCounters {
			if len(c.CompatibilityGroups) > 0 {
				return true
			}
		}
		return false
	}, func(d *resourcev1.Device) {
		for j := range d.ConsumesCounters {
			d.ConsumesCounters[j].CompatibilityGroups = nil
		}
	})
	dropDevices(func(d *resourcev1.Device) bool {
		for _, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				return true
			}
		}
		return false
	}, func(d *resourcev1.Device) {
		for k, a := range d.Attributes {
			if a.BoolValues != nil || a.IntValues != nil || a.StringValues != nil || a.VersionValues != nil {
				a.BoolValues, a.IntValues, a.StringValues, a.VersionValues = nil, nil, nil, nil
				d.Attributes[k] = a
			}
		}
	})
}

func sliceUses(spec *resourcev1.ResourceSliceSpec, uses func(*resourcev1.ResourceSliceSpec) bool) bool {
	return spec != nil && uses(spec)
}

func anyDevice(spec *resourcev1.ResourceSliceSpec, uses func(*resourcev1.Device) bool) bool {
	if spec == nil {
		return false
	}
	for i := range spec.Devices {
		if uses(&spec.Devices[i]) {
			return true
		}
	}
	return false
}
