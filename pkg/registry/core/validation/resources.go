package validation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource names as kube's pkg/apis/core/helper classifies them.

// standardResourceNames are the resource names kube knows without a
// domain (for containers, quotas and limit ranges).
var standardResourceNames = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true, corev1.ResourceRequestsEphemeralStorage: true,
	corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true, corev1.ResourceLimitsEphemeralStorage: true,
	corev1.ResourcePods: true, corev1.ResourceQuotas: true, corev1.ResourceServices: true,
	corev1.ResourceReplicationControllers: true, corev1.ResourceSecrets: true, corev1.ResourceConfigMaps: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceStorage: true, corev1.ResourceRequestsStorage: true,
	corev1.ResourceServicesNodePorts: true, corev1.ResourceServicesLoadBalancers: true,
}

func IsHugePageResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// IsNativeResource: no domain, or kube's own (kubernetes.io/).
func IsNativeResource(name corev1.ResourceName) bool {
	return !strings.Contains(string(name), "/") || strings.Contains(string(name), corev1.ResourceDefaultNamespacePrefix)
}

// IsExtendedResourceName is kube's helper of that name: a resource in a
// domain of its own (not kubernetes.io), valid as requests.<name>.
func IsExtendedResourceName(name corev1.ResourceName) bool {
	if IsNativeResource(name) || strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+string(name))) == 0
}

// isOvercommitAllowed: requests may be below limits (not for hugepages
// nor extended resources).
func isOvercommitAllowed(name corev1.ResourceName) bool {
	return IsNativeResource(name) && !IsHugePageResourceName(name)
}

// ValidateContainerResources validates a container's requests and limits:
// known names, non-negative quantities, whole numbers for extended
// resources, and requests not above limits.
func ValidateContainerResources(r *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	limPath, reqPath := fldPath.Child("limits"), fldPath.Child("requests")
	cpuOrMemory, hugePages := false, false
	for _, name := range sortedResourceNames(r.Limits) {
		q := r.Limits[name]
		p := limPath.Key(string(name))
		allErrs = append(allErrs, ValidateContainerResourceName(name, p)...)
		allErrs = append(allErrs, validateResourceQuantity(name, q, p)...)
		hugePages = hugePages || IsHugePageResourceName(name)
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	for _, name := range sortedResourceNames(r.Requests) {
		q := r.Requests[name]
		p := reqPath.Key(string(name))
		allErrs = append(allErrs, ValidateContainerResourceName(name, p)...)
		allErrs = append(allErrs, validateResourceQuantity(name, q, p)...)
		if lim, ok := r.Limits[name]; ok {
			if q.Cmp(lim) != 0 && !isOvercommitAllowed(name) {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, lim.String())))
			} else if q.Cmp(lim) > 0 {
				allErrs = append(allErrs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
			}
		} else if !isOvercommitAllowed(name) {
			allErrs = append(allErrs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
		hugePages = hugePages || IsHugePageResourceName(name)
		cpuOrMemory = cpuOrMemory || name == corev1.ResourceCPU || name == corev1.ResourceMemory
	}
	if hugePages && !cpuOrMemory {
		allErrs = append(allErrs, field.Forbidden(fldPath, "HugePages require cpu or memory"))
	}
	return allErrs
}

func ValidateContainerResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") {
		if !standardResourceNames[name] && !IsHugePageResourceName(name) && !strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix) {
			allErrs = append(allErrs, field.Invalid(fldPath, name, "must be a standard resource type or fully qualified"))
		}
		switch {
		case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage, IsHugePageResourceName(name):
			return allErrs
		}
		return append(allErrs, field.Invalid(fldPath, name, "must be a standard resource for containers"))
	}
	if !IsNativeResource(name) && !IsExtendedResourceName(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

func validateResourceQuantity(name corev1.ResourceName, q resource.Quantity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if q.Cmp(resource.Quantity{}) < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q.String(), "must be greater than or equal to 0"))
	}
	if IsExtendedResourceName(name) && q.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, q, "must be an integer"))
	}
	return allErrs
}

// sortedResourceNames orders a resource list's names, so that errors come
// in a stable order.
func sortedResourceNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
