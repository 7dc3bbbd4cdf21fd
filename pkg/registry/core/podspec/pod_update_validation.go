package podspec

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// updatablePodSpecFields lists, in kube's words, what a pod update may
// change.
var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// ValidatePodUpdate validates an update of a pod: a pod's spec is
// immutable but for container images, a shorter activeDeadlineSeconds,
// added tolerations and removed scheduling gates (and, for pods still
// gated, additions to their node selector).
func ValidatePodUpdate(pod, old *corev1.Pod) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ratchet(validatePodMetadataAndSpec(pod), func() field.ErrorList { return validatePodMetadataAndSpec(old) })...)
	specPath := field.NewPath("spec")

	for _, c := range []struct {
		new, old []corev1.Container
		name     string
	}{{pod.Spec.Containers, old.Spec.Containers, "containers"}, {pod.Spec.InitContainers, old.Spec.InitContainers, "initContainers"}} {
		p := specPath.Child(c.name)
		if len(c.new) != len(c.old) {
			return append(allErrs, field.Forbidden(p, "pod updates may not add or remove containers"))
		}
		for i, ctr := range c.new {
			if ctr.Image == "" {
				allErrs = append(allErrs, field.Required(p.Index(i).Child("image"), ""))
			}
			if len(strings.TrimSpace(ctr.Image)) != len(ctr.Image) {
				allErrs = append(allErrs, field.Invalid(p.Index(i).Child("image"), ctr.Image, "must not have leading or trailing whitespace"))
			}
		}
	}

	if d := pod.Spec.ActiveDeadlineSeconds; d != nil {
		if *d < 0 || *d > math.MaxInt32 {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if o := old.Spec.ActiveDeadlineSeconds; o != nil && *o < *d {
			return append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *d, "must be less than or equal to previous value"))
		}
	} else if old.Spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("activeDeadlineSeconds"), pod.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}

	allErrs = append(allErrs, validateOnlyAddedTolerations(pod.Spec.Tolerations, old.Spec.Tolerations, specPath.Child("tolerations"))...)
	allErrs = append(allErrs, validateOnlyDeletedSchedulingGates(pod.Spec.SchedulingGates, old.Spec.SchedulingGates, specPath.Child("schedulingGates"))...)

	if apiequality.Semantic.DeepEqual(pod.Spec, old.Spec) {
		return allErrs
	}
	// Put back what may change, then anything left is a forbidden change.
	munged := pod.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = old.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = old.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	munged.SchedulingGates = old.Spec.SchedulingGates
	munged.Tolerations = old.Spec.Tolerations
	if o, n := old.Spec.TerminationGracePeriodSeconds, munged.TerminationGracePeriodSeconds; o != nil && *o < 0 && n != nil && *n == 1 {
		munged.TerminationGracePeriodSeconds = o
	}
	if len(old.Spec.SchedulingGates) > 0 && !apiequality.Semantic.DeepEqual(munged.NodeSelector, old.Spec.NodeSelector) {
		// A pod still waiting for its gates may gain node selector terms.
		for k, v := range old.Spec.NodeSelector {
			if nv, ok := munged.NodeSelector[k]; !ok || nv != v {
				allErrs = append(allErrs, field.Invalid(specPath.Child("nodeSelector"), munged.NodeSelector,
					"only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
				break
			}
		}
		munged.NodeSelector = old.Spec.NodeSelector
	}
	if !apiequality.Semantic.DeepEqual(*munged, old.Spec) {
		allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("pod updates may not change fields other than %s\n%v",
			strings.Join(updatablePodSpecFields, ","), diff.Diff(old.Spec, *munged))))
	}
	return allErrs
}

func validateOnlyAddedTolerations(tolerations, old []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	for _, o := range old {
		found := false
		for _, t := range tolerations {
			// tolerationSeconds may change.
			o.TolerationSeconds = t.TolerationSeconds
			if reflect.DeepEqual(o, t) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(fldPath, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return ValidateTolerations(tolerations, fldPath)
}

func validateOnlyDeletedSchedulingGates(gates, old []corev1.PodSchedulingGate, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	existed := map[string]bool{}
	for _, g := range old {
		existed[g.Name] = true
	}
	for i, g := range gates {
		if !existed[g.Name] {
			allErrs = append(allErrs, field.Forbidden(fldPath.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return allErrs
}

// ValidatePodStatusUpdate validates an update through pods/status.
func ValidatePodStatusUpdate(pod, old *corev1.Pod) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	for i, c := range pod.Status.Conditions {
		p := statusPath.Child("conditions").Index(i)
		if c.ObservedGeneration < 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("observedGeneration"), c.ObservedGeneration, "must be a non-negative integer"))
		}
		switch c.Type {
		case corev1.PodScheduled, corev1.PodReady, corev1.PodInitialized:
		default:
			allErrs = append(allErrs, corevalidation.ValidateQualifiedName(string(c.Type), p.Child("Type"))...)
		}
	}
	if pod.Spec.NodeName != old.Spec.NodeName {
		allErrs = append(allErrs, field.Forbidden(statusPath.Child("nodeName"), "may not be changed directly"))
	}
	if n := pod.Status.NominatedNodeName; n != old.Status.NominatedNodeName && n != "" {
		for _, msg := range apivalidation.NameIsDNSSubdomain(n, false) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("nominatedNodeName"), n, msg))
		}
		if old.Spec.NodeName != "" {
			allErrs = append(allErrs, field.Forbidden(statusPath.Child("nominatedNodeName"), "may not be set on pods that are already bound to a node"))
		}
	}
	if pod.Status.ObservedGeneration < 0 {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("observedGeneration"), pod.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	allErrs = append(allErrs, apivalidation.ValidateImmutableField(pod.Status.QOSClass, old.Status.QOSClass, statusPath.Child("qosClass"))...)
	return append(allErrs, validatePodIPs(pod, old)...)
}

// validatePodIPs: every new IP must be valid (old invalid ones may stay),
// at most one per family, and podIP must be podIPs[0].
func validatePodIPs(pod, old *corev1.Pod) field.ErrorList {
	var allErrs field.ErrorList
	p := field.NewPath("status", "podIPs")
	var existing []string
	for _, ip := range old.Status.PodIPs {
		existing = append(existing, ip.IP)
	}
	for i, ip := range pod.Status.PodIPs {
		allErrs = append(allErrs, validation.IsValidIPForLegacyField(p.Index(i), ip.IP, true, existing)...)
	}
	if n := len(pod.Status.PodIPs); n > 1 {
		v4 := 0
		for _, ip := range pod.Status.PodIPs {
			if !strings.Contains(ip.IP, ":") {
				v4++
			}
		}
		if n > 2 || v4 != 1 {
			allErrs = append(allErrs, field.Invalid(p, pod.Status.PodIPs, "may specify no more than one IP for each IP family"))
		}
	}
	switch hasIP, hasIPs := pod.Status.PodIP != "", len(pod.Status.PodIPs) > 0; {
	case hasIP != hasIPs:
		allErrs = append(allErrs, field.Invalid(p, pod.Status.PodIPs, "podIP and podIPs must either both be set or both be unset"))
	case hasIPs && pod.Status.PodIP != pod.Status.PodIPs[0].IP:
		allErrs = append(allErrs, field.Invalid(p.Index(0).Child("ip"), pod.Status.PodIPs[0].IP, "must be equal to `podIP`"))
	}
	return allErrs
}

// ratchet drops from errs those the stored object has too (old, computed
// only when errs is not empty): an object this server stored before a
// check existed stays updatable (its finalizers removable) while the
// update adds nothing the check refuses. An object kube could have stored
// has no such errors, so for it the result is kube's.
func ratchet(errs field.ErrorList, old func() field.ErrorList) field.ErrorList {
	if len(errs) == 0 {
		return errs
	}
	had := map[string]bool{}
	for _, e := range old() {
		had[e.Error()] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		if !had[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}
