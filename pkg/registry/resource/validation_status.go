package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// The checks of a claim's status, as the scheduler and the drivers write
// it through resourceclaims/status.

// deviceID names an allocated device (or a share of it); errors show it
// with these field names, as kube's do.
type deviceID struct {
	Driver, Pool, Device string
	ShareID              types.UID
}

func resultID(r resourcev1.DeviceRequestAllocationResult) deviceID {
	id := deviceID{Driver: r.Driver, Pool: r.Pool, Device: r.Device}
	if r.ShareID != nil {
		id.ShareID = *r.ShareID
	}
	return id
}

func statusID(d resourcev1.AllocatedDeviceStatus) deviceID {
	id := deviceID{Driver: d.Driver, Pool: d.Pool, Device: d.Device}
	if d.ShareID != nil {
		id.ShareID = types.UID(*d.ShareID)
	}
	return id
}

func validateClaimStatusUpdate(claim, old *resourcev1.ResourceClaim) field.ErrorList {
	status, oldStatus := &claim.Status, &old.Status
	fldPath := field.NewPath("status")
	names := gatherRequestNames(&claim.Spec.Devices)
	allErrs := validateSet(status.ReservedFor, resourcev1.ResourceClaimReservedForMaxSize, validateConsumerReference,
		func(r resourcev1.ResourceClaimConsumerReference) types.UID { return r.UID }, fldPath.Child("reservedFor"), sizeCovered, uniquenessCovered)

	allocated := sets.New[deviceID]()
	if status.Allocation != nil {
		for _, r := range status.Allocation.Devices.Results {
			allocated.Insert(resultID(r))
		}
	}
	allErrs = append(allErrs, validateSet(status.Devices, -1, func(d resourcev1.AllocatedDeviceStatus, fldPath *field.Path) field.ErrorList {
		return validateDeviceStatus(d, fldPath, allocated)
	}, statusID, fldPath.Child("devices"), uniquenessCovered)...)

	if len(status.ReservedFor) > 0 {
		if status.Allocation == nil {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("reservedFor"), "may not be specified when `allocated` is not set"))
		} else if claim.DeletionTimestamp != nil && sets.New(status.ReservedFor...).Difference(sets.New(oldStatus.ReservedFor...)).Len() > 0 {
			// A claim being deleted may lose its consumers, not gain them.
			allErrs = append(allErrs, field.Forbidden(fldPath.Child("reservedFor"), "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
		}
	}

	// An allocation, once set, never changes; a new one is checked with
	// today's (stricter) rules, a stored one is not checked again.
	switch {
	case oldStatus.Allocation != nil && status.Allocation != nil:
		if !apiequality.Semantic.DeepEqual(status.Allocation, oldStatus.Allocation) {
			allErrs = append(allErrs, declarative(field.ErrorList{field.Invalid(fldPath.Child("allocation"), nil, "field cannot be modified once set").WithOrigin("update")})...)
		}
	case status.Allocation != nil:
		allErrs = append(allErrs, validateAllocation(status.Allocation, fldPath.Child("allocation"), names)...)
	}
	return allErrs
}

func validateConsumerReference(ref resourcev1.ResourceClaimConsumerReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if ref.Resource == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("resource"), ""))
	}
	if ref.Name == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("name"), ""))
	}
	if ref.UID == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("uid"), ""))
	}
	return allErrs
}

func validateAllocation(a *resourcev1.AllocationResult, fldPath *field.Path, names requestNames) field.ErrorList {
	path := fldPath.Child("devices")
	allErrs := validateSlice(a.Devices.Results, resourcev1.AllocationResultsMaxSize, func(r resourcev1.DeviceRequestAllocationResult, fldPath *field.Path) field.ErrorList {
		return validateAllocationResult(r, fldPath, names)
	}, path.Child("results"), sizeCovered)
	allErrs = append(allErrs, validateSlice(a.Devices.Config, 2*resourcev1.DeviceConfigMaxSize, func(c resourcev1.DeviceAllocationConfiguration, fldPath *field.Path) field.ErrorList {
		return validateAllocationConfiguration(c, fldPath, names)
	}, path.Child("config"), sizeCovered)...)
	if a.NodeSelector != nil {
		allErrs = append(allErrs, corevalidation.ValidateNodeSelector(a.NodeSelector, fldPath.Child("nodeSelector"))...)
	}
	return allErrs
}

func validateAllocationResult(r resourcev1.DeviceRequestAllocationResult, fldPath *field.Path, names requestNames) field.ErrorList {
	allErrs := validateRequestRef(r.Request, fldPath.Child("request"), names)
	allErrs = append(allErrs, declarativeDriverName(r.Driver, fldPath.Child("driver"))...)
	allErrs = append(allErrs, declarativePoolName(r.Pool, fldPath.Child("pool"))...)
	allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(r.Device, fldPath.Child("device"))...)
	allErrs = append(allErrs, validateBindingConditions(r.BindingConditions, r.BindingFailureConditions, fldPath)...)
	for i, t := range r.Tolerations {
		allErrs = append(allErrs, validateDeviceToleration(t, fldPath.Child("tolerations").Index(i))...)
	}
	if r.ShareID != nil {
		share := string(*r.ShareID)
		allErrs = append(allErrs, declarativeUUID(&share, fldPath.Child("shareID"))...)
	}
	return allErrs
}

var configSources = sets.New(resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass)

func validateAllocationConfiguration(c resourcev1.DeviceAllocationConfiguration, fldPath *field.Path, names requestNames) field.ErrorList {
	source := fldPath.Child("source")
	var allErrs field.ErrorList
	if c.Source == "" {
		allErrs = declarative(validate.RequiredValue(dvCtx, create, source, &c.Source, nil))
	} else {
		allErrs = declarative(validate.Enum(dvCtx, create, source, &c.Source, nil, configSources, nil))
	}
	allErrs = append(allErrs, validateRequestRefs(c.Requests, fldPath.Child("requests"), names)...)
	return append(allErrs, validateDeviceConfiguration(c.DeviceConfiguration, fldPath, false)...)
}

func validateDeviceStatus(d resourcev1.AllocatedDeviceStatus, fldPath *field.Path, allocated sets.Set[deviceID]) field.ErrorList {
	allErrs := validateDriverName(d.Driver, fldPath.Child("driver"))
	allErrs = append(allErrs, validatePoolName(d.Pool, fldPath.Child("pool"))...)
	allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(d.Device, fldPath.Child("device"))...)
	allErrs = append(allErrs, declarativeUUID(d.ShareID, fldPath.Child("shareID"))...)
	if id := statusID(d); !allocated.Has(id) {
		allErrs = append(allErrs, field.Invalid(fldPath, id, "must be an allocated device in the claim"))
	}
	if len(d.Conditions) > resourcev1.AllocatedDeviceStatusMaxConditions {
		allErrs = append(allErrs, field.TooMany(fldPath.Child("conditions"), len(d.Conditions), resourcev1.AllocatedDeviceStatusMaxConditions))
	}
	allErrs = append(allErrs, metav1validation.ValidateConditions(d.Conditions, fldPath.Child("conditions"))...)
	if d.Data != nil && len(d.Data.Raw) > 0 {
		allErrs = append(allErrs, validateRawExtension(*d.Data, fldPath.Child("data"), false, resourcev1.AllocatedDeviceStatusDataMaxLength)...)
	}
	return append(allErrs, validateNetworkData(d.NetworkData, fldPath.Child("networkData"))...)
}

func validateNetworkData(data *resourcev1.NetworkDeviceData, fldPath *field.Path) field.ErrorList {
	if data == nil {
		return nil
	}
	allErrs := declarative(validate.MaxBytes(dvCtx, create, fldPath.Child("interfaceName"), &data.InterfaceName, nil, resourcev1.NetworkDeviceDataInterfaceNameMaxLength))
	allErrs = append(allErrs, validateSet(data.IPs, resourcev1.NetworkDeviceDataMaxIPs, func(ip string, fldPath *field.Path) field.ErrorList {
		return validation.IsValidInterfaceAddress(fldPath, ip)
	}, stringKey, fldPath.Child("ips"), sizeCovered, uniquenessCovered)...)
	return append(allErrs, declarative(validate.MaxBytes(dvCtx, create, fldPath.Child("hardwareAddress"), &data.HardwareAddress, nil, resourcev1.NetworkDeviceDataHardwareAddressMaxLength))...)
}
