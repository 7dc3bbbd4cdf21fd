package core

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kube checks a RuntimeClass's overhead and scheduling with the pods'
// rules; these give the node.k8s.io group the same checks.

// ValidateTolerations checks tolerations as a pod's are checked.
func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	return validateTolerations(tolerations, fldPath)
}

// ValidateResourceLimits checks a list of resources as a container's
// limits are checked, under fldPath.limits.
func ValidateResourceLimits(limits corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	return validateContainerResources(&corev1.ResourceRequirements{Limits: limits}, fldPath)
}
