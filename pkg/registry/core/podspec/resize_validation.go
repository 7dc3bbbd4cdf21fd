package podspec

import (
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// ValidatePodResize validates a write of pods/resize (the strategy kept
// everything of the old pod but the containers' resources and resize
// policies and the pod-level resources), as kube 1.37 with its default
// feature gates: only cpu and memory change, none is removed, the QoS
// class stays, containers are not added, removed, renamed or reordered;
// init containers resize too (InPlacePodVerticalScalingInitContainers),
// pod-level resources too (InPlacePodLevelResourcesVerticalScaling);
// volumes do not change (InPlacePodVerticalScalingMemoryBackedVolumes is
// off).
func ValidatePodResize(pod, old *corev1.Pod) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod)...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	specPath := field.NewPath("spec")
	oldQOS := old.Status.QOSClass
	if oldQOS == "" {
		oldQOS = QOSClass(&old.Spec)
	}
	if oldQOS != QOSClass(&pod.Spec) {
		allErrs = append(allErrs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupportedOnNode(old) {
		allErrs = append(allErrs, field.Forbidden(specPath, "Pod running on node without support for resize"))
	}

	// masked is the new spec with the cpu and memory of every resource
	// list put back as they were: it must equal the old spec.
	masked := pod.Spec.DeepCopy()
	if hasPodLevelResources(&old.Spec) || hasPodLevelResources(&pod.Spec) {
		allErrs = append(allErrs, validatePodLevelResize(pod, old, masked, specPath)...)
	}
	if errs := validateResizeOrdering(pod, old, specPath); errs != nil {
		return append(allErrs, errs...)
	}
	for i := range old.Spec.InitContainers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources,
			specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		allErrs = append(allErrs, validateContainerResize(&pod.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources,
			specPath.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range masked.Containers {
		keepOldCPUMemory(&masked.Containers[i], &old.Spec.Containers[i])
		if !apiequality.Semantic.DeepEqual(masked.Containers[i], old.Spec.Containers[i]) {
			allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range masked.InitContainers {
		c, oldC := &masked.InitContainers[i], &old.Spec.InitContainers[i]
		modified := !apiequality.Semantic.DeepEqual(*c, *oldC)
		keepOldCPUMemory(c, oldC)
		p := specPath.Child("initContainers").Index(i)
		if !apiequality.Semantic.DeepEqual(*c, *oldC) {
			allErrs = append(allErrs, field.Forbidden(p, "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && !isSidecar(c) {
			for _, policy := range c.ResizePolicy {
				if policy.RestartPolicy == corev1.RestartContainer {
					allErrs = append(allErrs, field.Forbidden(p, "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	if !apiequality.Semantic.DeepEqual(pod.Spec.Volumes, old.Spec.Volumes) {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes"),
			"volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(allErrs) > 0 {
		return allErrs
	}
	if !apiequality.Semantic.DeepEqual(*masked, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
	}
	return allErrs
}

// resizeSupportedOnNode is kube's check for kubelets older than in-place
// resize: a running container whose status reports no resources.
func resizeSupportedOnNode(pod *corev1.Pod) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

func hasPodLevelResources(spec *corev1.PodSpec) bool {
	return spec.Resources != nil && len(spec.Resources.Requests)+len(spec.Resources.Limits) > 0
}

func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// validateResizeOrdering refuses added, removed, renamed or reordered
// containers; the rest of the checks pair containers by index.
func validateResizeOrdering(pod, old *corev1.Pod, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, kind := range []struct {
		name     string
		new, old []corev1.Container
	}{{"containers", pod.Spec.Containers, old.Spec.Containers}, {"initContainers", pod.Spec.InitContainers, old.Spec.InitContainers}} {
		p := specPath.Child(kind.name)
		if len(kind.new) != len(kind.old) {
			allErrs = append(allErrs, field.Forbidden(p, kind.name+" may not be added or removed on resize"))
			continue
		}
		for i := range kind.old {
			if kind.new[i].Name != kind.old[i].Name {
				allErrs = append(allErrs, field.Forbidden(p.Index(i).Child("name"), kind.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return allErrs
}

// validateContainerResize refuses removing a request or a limit.
func validateContainerResize(r, old *corev1.ResourceRequirements, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if resourcesRemoved(r.Requests, old.Requests) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(r.Limits, old.Limits) {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("limits"), "resource limits cannot be removed"))
	}
	return allErrs
}

func resourcesRemoved(list, old corev1.ResourceList) bool {
	for name := range old {
		if _, ok := list[name]; !ok {
			return true
		}
	}
	return false
}

// validatePodLevelResize checks pod-level resources, which may change
// their cpu and memory but not go away, and masks them in masked.
func validatePodLevelResize(pod, old *corev1.Pod, masked *corev1.PodSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if old.Spec.Resources != nil && pod.Spec.Resources == nil {
		return field.ErrorList{field.Forbidden(specPath.Child("resources"), "pod-level resources cannot be removed")}
	}
	if old.Spec.Resources != nil {
		if resourcesRemoved(pod.Spec.Resources.Requests, old.Spec.Resources.Requests) {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("resources", "requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(pod.Spec.Resources.Limits, old.Spec.Resources.Limits) {
			allErrs = append(allErrs, field.Forbidden(specPath.Child("resources", "limits"), "pod-level resource limits cannot be removed"))
		}
	}
	if r := masked.Resources; r != nil {
		var oldRequests, oldLimits corev1.ResourceList
		if old.Spec.Resources != nil {
			oldRequests, oldLimits = old.Spec.Resources.Requests, old.Spec.Resources.Limits
		}
		r.Requests = withOldCPUMemory(r.Requests, oldRequests)
		r.Limits = withOldCPUMemory(r.Limits, oldLimits)
		if old.Spec.Resources == nil && len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
			masked.Resources = nil
		}
	}
	if !apiequality.Semantic.DeepEqual(masked.Resources, old.Spec.Resources) {
		allErrs = append(allErrs, field.Forbidden(specPath, "only cpu and memory resources are mutable at pod-level"))
	}
	return allErrs
}

// keepOldCPUMemory puts c's cpu and memory back as old has them (claims
// stay as c has them: they are immutable, the comparison catches them).
func keepOldCPUMemory(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   withOldCPUMemory(c.Resources.Limits, old.Resources.Limits),
		Requests: withOldCPUMemory(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

// withOldCPUMemory is list with its cpu and memory as old has them.
func withOldCPUMemory(list, old corev1.ResourceList) corev1.ResourceList {
	if list == nil && old == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}
