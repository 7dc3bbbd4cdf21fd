package podspec

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sysctlNameMaxLength and sysctlName are kube's form of a sysctl name:
// segments of lowercase alphanumerics, '-' and '_', joined by '.' or '/'.
const sysctlNameMaxLength = 253

var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateSysctls checks the pod's sysctls as kube does: each named
// (validly, once), and none of a namespace the pod shares with the host.
func validateSysctls(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.SecurityContext == nil {
		return nil
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, s := range spec.SecurityContext.Sysctls {
		p := fldPath.Index(i).Child("name")
		if s.Name == "" {
			allErrs = append(allErrs, field.Required(p, ""))
			continue
		}
		if len(s.Name) > sysctlNameMaxLength || !sysctlName.MatchString(s.Name) {
			allErrs = append(allErrs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlNameMaxLength, sysctlName)))
		} else if names.Has(s.Name) {
			allErrs = append(allErrs, field.Duplicate(p, s.Name))
		}
		names.Insert(s.Name)
		if host := hostNamespaceOf(s.Name, spec); host != "" {
			allErrs = append(allErrs, field.Invalid(p, s.Name, fmt.Sprintf("may not be specified when '%s' is true", host)))
		}
	}
	return allErrs
}

// hostNamespaceOf names the pod field ("hostNetwork", "hostIPC") that
// shares with the host the kernel namespace sysctl belongs to, or "" when
// the pod has its own: a pod may not set the host's sysctls.
func hostNamespaceOf(sysctl string, spec *corev1.PodSpec) string {
	name := normalizeSysctl(sysctl)
	switch {
	case spec.HostNetwork && strings.HasPrefix(name, "net."):
		return "hostNetwork"
	case spec.HostIPC && (name == "kernel.sem" || strings.HasPrefix(name, "kernel.shm") ||
		strings.HasPrefix(name, "kernel.msg") || strings.HasPrefix(name, "fs.mqueue.")):
		return "hostIPC"
	}
	return ""
}

// normalizeSysctl writes a name separated by '/' ("kernel/shm_rmid_forced")
// with dots, as the kernel's /proc/sys path it stands for; in such a name
// a dot is part of a segment and becomes '/'.
func normalizeSysctl(name string) string {
	i := strings.IndexAny(name, "./")
	if i < 0 || name[i] == '.' {
		return name
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, name)
}
