package podspec

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
)

// allowedEphemeralContainerFields are the fields of an ephemeral
// container kube lets be set: a debugging shell, not part of the
// workload (no ports, probes, lifecycle or resources).
var allowedEphemeralContainerFields = sets.New(
	"Name", "Image", "Command", "Args", "WorkingDir", "EnvFrom", "Env", "VolumeMounts", "VolumeDevices",
	"TerminationMessagePath", "TerminationMessagePolicy", "ImagePullPolicy", "SecurityContext", "Stdin", "StdinOnce", "TTY",
)

const notForEphemeral = "cannot be set for an Ephemeral Container"

// validateEphemeralContainers validates a pod's ephemeral containers:
// what every container satisfies, names unique among all the pod's
// containers, a target that is one of its other containers, and only the
// allowed fields set.
func validateEphemeralContainers(ephemeral []corev1.EphemeralContainer, containers, initContainers []corev1.Container,
	volumes map[string]corev1.VolumeSource, hostUsers bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, cs := range [][]corev1.Container{containers, initContainers} {
		for _, c := range cs {
			others.Insert(c.Name)
			all.Insert(c.Name)
		}
	}
	for i := range ephemeral {
		ec := &ephemeral[i]
		p := fldPath.Index(i)
		c := corev1.Container(ec.EphemeralContainerCommon)
		allErrs = append(allErrs, validateContainerCommon(&c, volumes, hostUsers, p)...)
		if len(c.Image) != len(strings.TrimSpace(c.Image)) {
			allErrs = append(allErrs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if all.Has(ec.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), ec.Name))
		} else {
			all.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			allErrs = append(allErrs, field.NotFound(p.Child("targetContainerName"), ec.TargetContainerName))
		}
		allErrs = append(allErrs, forbidUnlistedFields(ec.EphemeralContainerCommon, p)...)
		for j, m := range ec.VolumeMounts {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPath"), notForEphemeral))
			}
			if m.SubPathExpr != "" {
				allErrs = append(allErrs, field.Forbidden(p.Child("volumeMounts").Index(j).Child("subPathExpr"), notForEphemeral))
			}
		}
	}
	return allErrs
}

// forbidUnlistedFields forbids every field of c, in declaration order,
// that is set and not in allowedEphemeralContainerFields: a field added
// to containers later is refused until someone allows it.
func forbidUnlistedFields(c corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if allowedEphemeralContainerFields.Has(f.Name) || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		allErrs = append(allErrs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), notForEphemeral))
	}
	return allErrs
}

// ValidatePodEphemeralContainersUpdate validates a write of
// pods/ephemeralcontainers (the strategy kept everything else of the old
// pod): the pod stays valid, and existing ephemeral containers are
// neither removed nor changed. Static pods take none.
func ValidatePodEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	allErrs := corevalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validatePodMetadataAndSpec(pod)...)
	if _, ok := old.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	specPath := field.NewPath("spec", "ephemeralContainers")
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	for _, oldEC := range old.Spec.EphemeralContainers {
		ec, ok := byName[oldEC.Name]
		switch {
		case !ok:
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", oldEC.Name)))
		case !apiequality.Semantic.DeepEqual(oldEC, *ec):
			allErrs = append(allErrs, field.Forbidden(specPath, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v",
				oldEC.Name, corevalidation.InternalDiff(oldEC, *ec))))
		}
	}
	return allErrs
}
