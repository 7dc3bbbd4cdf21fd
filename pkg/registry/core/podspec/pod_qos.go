package podspec

import (
	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
)

// QOSClass computes a pod's quality of service class as kube does when
// the pod is created: from pod-level resources when the pod sets some,
// else from every init and regular container. Guaranteed needs requests
// equal to limits for both CPU and memory everywhere; no requests nor
// limits anywhere is BestEffort; anything else is Burstable.
func QOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	if spec.Resources != nil && podLevelResourcesSet(spec.Resources) {
		return requirementsQOS(spec.Resources)
	}
	var qos corev1.PodQOSClass
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			c := requirementsQOS(&containers[i].Resources)
			switch {
			case c == corev1.PodQOSBurstable:
				return c
			case qos == "":
				qos = c
			case qos != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if qos == "" {
		return corev1.PodQOSBestEffort
	}
	return qos
}

// podLevelResourcesSet reports whether pod-level resources name a resource
// kube supports there (cpu, memory, hugepages).
func podLevelResourcesSet(r *corev1.ResourceRequirements) bool {
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for name := range list {
			if name == corev1.ResourceCPU || name == corev1.ResourceMemory || corevalidation.IsHugePageResourceName(name) {
				return true
			}
		}
	}
	return false
}

func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case !req.Equal(lim):
			return corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if qos == "" {
			qos = c
		} else if qos != c {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
