package validation

import (
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	isNegativeErrorMsg     = apivalidation.IsNegativeErrorMsg
	isNotIntegerErrorMsg   = "must be an integer"
	isNotPositiveErrorMsg  = "must be greater than zero"
	isInvalidQuotaResource = "must be a standard resource for quota"
)

// ValidateObjectMeta is kube's core ValidateObjectMeta: apimachinery's
// checks plus kube's rule that unqualified finalizer names are standard.
func ValidateObjectMeta(m *metav1.ObjectMeta, requiresNamespace bool, nameFn apivalidation.ValidateNameFunc, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMeta(m, requiresNamespace, nameFn, fldPath)
	for i := range m.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(m.Finalizers[i], fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

// ValidateObjectMetaUpdate is kube's core ValidateObjectMetaUpdate.
func ValidateObjectMetaUpdate(newMeta, oldMeta *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apivalidation.ValidateObjectMetaUpdate(newMeta, oldMeta, fldPath)
	for i := range newMeta.Finalizers {
		allErrs = append(allErrs, validateKubeFinalizerName(newMeta.Finalizers[i], fldPath.Child("finalizers").Index(i))...)
	}
	return allErrs
}

var standardFinalizers = sets.New(string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)

func validateKubeFinalizerName(name string, fldPath *field.Path) field.ErrorList {
	if !strings.Contains(name, "/") && !standardFinalizers.Has(name) {
		return field.ErrorList{field.Invalid(fldPath, name, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// validateImmutableField is apimachinery's, named as kube's callers name it.
var validateImmutableField = apivalidation.ValidateImmutableField

var supportedPortProtocols = sets.New(corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP)

// ValidateProtocol checks a port's protocol: required, one of kube's.
func ValidateProtocol(p corev1.Protocol, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !supportedPortProtocols.Has(p) {
		return field.ErrorList{field.NotSupported(fldPath, p, sets.List(supportedPortProtocols))}
	}
	return nil
}

func ValidatePortNum(port int32, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		allErrs = append(allErrs, field.Invalid(fldPath, port, msg))
	}
	return allErrs
}

// Resource names and quantities.

var (
	standardResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims, corev1.ResourceStorage,
		corev1.ResourceRequestsStorage, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	StandardQuotaResources = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsStorage, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	standardContainerResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	integerResources           = sets.New[corev1.ResourceName](
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
)

func IsQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return IsHugePageResourceName(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources.Has(name) || IsExtendedResourceName(name)
}

// ValidateResourceName: a qualified name, and a standard one unless it has
// a domain.
func ValidateResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := ValidateQualifiedName(string(value), fldPath)
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(value), "/") && !standardResources.Has(value) && !IsQuotaHugePageResourceName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

func ValidateResourceQuotaResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := ValidateResourceName(value, fldPath)
	if !strings.Contains(string(value), "/") && !StandardQuotaResources.Has(value) && !IsQuotaHugePageResourceName(value) {
		return append(allErrs, field.Invalid(fldPath, value, isInvalidQuotaResource))
	}
	return allErrs
}

func validateNonnegativeQuantity(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) < 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNegativeErrorMsg)}
	}
	return nil
}

func ValidatePositiveQuantityValue(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// ValidateResourceQuantityValue: non-negative, and whole for countable
// resources.
func ValidateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegativeQuantity(value, fldPath)
	if isIntegerResourceName(name) && value.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

// DefaultResourceList rounds every quantity up to milli precision, as
// kube's defaulter does for each ResourceList.
func DefaultResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(resource.Milli)
		list[name] = q
	}
}

// IsDualStack reports whether values hold one address (or CIDR) of each
// family; isIPv6 tells the family of one.
func IsDualStack(values []string, isIPv6 func(string) bool) bool {
	v4, v6 := false, false
	for _, v := range values {
		if isIPv6(v) {
			v6 = true
		} else {
			v4 = true
		}
	}
	return v4 && v6
}

func IPIsIPv6(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil
}

func CIDRIsIPv6(s string) bool {
	ip, _, err := net.ParseCIDR(s)
	return err == nil && ip.To4() == nil
}

// ValidateReplicaCounts validates the status counters of a replication
// controller or replica set: none negative, none above status.replicas,
// availableReplicas not above readyReplicas.
func ValidateReplicaCounts(p *field.Path, replicas, fullyLabeled, ready, available int32, observedGeneration int64) field.ErrorList {
	var allErrs field.ErrorList
	for _, f := range []struct {
		v    int64
		name string
	}{
		{int64(replicas), "replicas"}, {int64(fullyLabeled), "fullyLabeledReplicas"}, {int64(ready), "readyReplicas"},
		{int64(available), "availableReplicas"}, {observedGeneration, "observedGeneration"},
	} {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(f.v, p.Child(f.name))...)
	}
	const msg = "cannot be greater than status.replicas"
	if fullyLabeled > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("fullyLabeledReplicas"), fullyLabeled, msg))
	}
	if ready > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("readyReplicas"), ready, msg))
	}
	if available > replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), available, msg))
	}
	if available > ready {
		allErrs = append(allErrs, field.Invalid(p.Child("availableReplicas"), available, "cannot be greater than readyReplicas"))
	}
	return allErrs
}
