package podspec

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/miniapiserver/miniapiserver/pkg/registry/request"
)

// ApplyAppArmorAnnotations gives a new pod's containers the AppArmor
// profile their deprecated annotation names, as kube does on create so
// that old clients keep working with kubelets that only read the field.
// It warns whenever the annotation was the only place the profile was
// stated (or could not be understood). The warning is added here, before
// the pod's other warnings, because once the field is set the annotation
// no longer looks unaccompanied.
func ApplyAppArmorAnnotations(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return
	}
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	apply := func(c *corev1.Container) {
		key := appArmorContainerAnnotationPrefix + c.Name
		annotation, ok := pod.Annotations[key]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		profile := appArmorProfileFor(annotation)
		warn := profile == nil
		// A profile the pod already sets for all containers stays implicit.
		if profile != nil && !apiequality.Semantic.DeepEqual(profile, podProfile) {
			if c.SecurityContext == nil {
				c.SecurityContext = &corev1.SecurityContext{}
			}
			c.SecurityContext.AppArmorProfile = profile
			warn = true
		}
		if warn {
			request.AddWarning(ctx, fmt.Sprintf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`,
				field.NewPath("metadata", "annotations").Key(key)))
		}
	}
	for i := range pod.Spec.InitContainers {
		apply(&pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		apply(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		apply(&c)
		pod.Spec.EphemeralContainers[i].EphemeralContainerCommon = corev1.EphemeralContainerCommon(c)
	}
}

// appArmorProfileFor reads the annotation's value ("runtime/default",
// "unconfined", "localhost/<profile>"); nil when it is not a valid profile.
func appArmorProfileFor(value string) *corev1.AppArmorProfile {
	switch {
	case value == "runtime/default":
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case value == "unconfined":
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case strings.HasPrefix(value, "localhost/"):
		name := strings.TrimPrefix(value, "localhost/")
		// The field's validation: no surrounding space, not empty, at
		// most 4095 bytes.
		if name == "" || strings.TrimSpace(name) != name || len(name) > 4095 {
			return nil
		}
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}
