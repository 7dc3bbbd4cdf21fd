package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The checks below are those of kube's pkg/apis/core/validation that
// several resources of this package share, with kube's messages.

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

// validateProtocol checks a port's protocol: required, one of kube's.
func validateProtocol(p corev1.Protocol, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	if !supportedPortProtocols.Has(p) {
		return field.ErrorList{field.NotSupported(fldPath, p, sets.List(supportedPortProtocols))}
	}
	return nil
}

func validatePortNum(port int32, fldPath *field.Path) field.ErrorList {
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
	standardQuotaResources = sets.New[corev1.ResourceName](
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

func isQuotaHugePageResourceName(name corev1.ResourceName) bool {
	return isHugePageResourceName(name) || strings.HasPrefix(string(name), corev1.ResourceRequestsHugePagesPrefix)
}

func isIntegerResourceName(name corev1.ResourceName) bool {
	return integerResources.Has(name) || isExtendedResourceName(name)
}

// validateResourceName: a qualified name, and a standard one unless it has
// a domain.
func validateResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateQualifiedName(string(value), fldPath)
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(value), "/") && !standardResources.Has(value) && !isQuotaHugePageResourceName(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, "must be a standard resource type or fully qualified"))
	}
	return allErrs
}

func validateResourceQuotaResourceName(value corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(value, fldPath)
	if !strings.Contains(string(value), "/") && !standardQuotaResources.Has(value) && !isQuotaHugePageResourceName(value) {
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

func validatePositiveQuantityValue(value resource.Quantity, fldPath *field.Path) field.ErrorList {
	if value.Cmp(resource.Quantity{}) <= 0 {
		return field.ErrorList{field.Invalid(fldPath, value.String(), isNotPositiveErrorMsg)}
	}
	return nil
}

// validateResourceQuantityValue: non-negative, and whole for countable
// resources.
func validateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	allErrs := validateNonnegativeQuantity(value, fldPath)
	if isIntegerResourceName(name) && value.MilliValue()%1000 != 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

// defaultResourceList rounds every quantity up to milli precision, as
// kube's defaulter does for each ResourceList.
func defaultResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(resource.Milli)
		list[name] = q
	}
}

// isDualStack reports whether values hold one address (or CIDR) of each
// family; isIPv6 tells the family of one.
func isDualStack(values []string, isIPv6 func(string) bool) bool {
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

func ipIsIPv6(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil
}

func cidrIsIPv6(s string) bool {
	ip, _, err := net.ParseCIDR(s)
	return err == nil && ip.To4() == nil
}

// internalDiff is the diff kube's immutability messages show: kube diffs
// its internal types, which have no JSON tags, so their JSON has every
// field, under its Go name, in declaration order. goFields renders our
// v1 values the same way (the layouts agree for the specs diffed here).
func internalDiff(a, b any) string {
	return diff.Diff(goFields{reflect.ValueOf(a)}, goFields{reflect.ValueOf(b)})
}

// internalValue wraps a value shown in a field error the way kube shows
// its internal type's.
func internalValue(v any) any { return goFields{reflect.ValueOf(v)} }

// goFields marshals a value as encoding/json marshals a struct without
// tags.
type goFields struct{ v reflect.Value }

func (g goFields) MarshalJSON() ([]byte, error) {
	v := g.v
	if !v.IsValid() {
		return []byte("null"), nil
	}
	if v.CanInterface() {
		if m, ok := v.Interface().(json.Marshaler); ok && (v.Kind() != reflect.Pointer || !v.IsNil()) {
			return m.MarshalJSON()
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []byte("null"), nil
		}
		return goFields{v.Elem()}.MarshalJSON()
	case reflect.Struct:
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i := 0; i < v.NumField(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			name, _ := json.Marshal(v.Type().Field(i).Name)
			buf.Write(name)
			buf.WriteByte(':')
			sub, err := goFields{v.Field(i)}.MarshalJSON()
			if err != nil {
				return nil, err
			}
			buf.Write(sub)
		}
		buf.WriteByte('}')
		return buf.Bytes(), nil
	case reflect.Slice:
		if v.IsNil() {
			return []byte("null"), nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return json.Marshal(v.Interface())
		}
		items := make([]goFields, v.Len())
		for i := range items {
			items[i] = goFields{v.Index(i)}
		}
		return json.Marshal(items)
	case reflect.Map:
		if v.IsNil() {
			return []byte("null"), nil
		}
		m := make(map[string]goFields, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = goFields{it.Value()}
		}
		return json.Marshal(m)
	}
	return json.Marshal(v.Interface())
}
