package podspec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The security contexts' rules are kube's (validatePodSpecSecurityContext
// and ValidateSecurityContext): user and group IDs in range, the enums,
// seccomp and AppArmor profiles, Windows options, and the combinations
// kube refuses, with kube's messages (internalForm prints a refused
// struct as kube's errors do).

// validatePodSecurityContext validates spec.securityContext, and
// shareProcessNamespace with hostPID.
func validatePodSecurityContext(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if sc := spec.SecurityContext; sc != nil {
		p := fldPath.Child("securityContext")
		allErrs = append(allErrs, validateID(sc.FSGroup, validation.IsValidGroupID, p.Child("fsGroup"))...)
		allErrs = append(allErrs, validateID(sc.RunAsUser, validation.IsValidUserID, p.Child("runAsUser"))...)
		allErrs = append(allErrs, validateID(sc.RunAsGroup, validation.IsValidGroupID, p.Child("runAsGroup"))...)
		for i, gid := range sc.SupplementalGroups {
			allErrs = append(allErrs, validateID(&gid, validation.IsValidGroupID, p.Child("supplementalGroups").Index(i))...)
		}
		allErrs = append(allErrs, validateSysctls(spec, p.Child("sysctls"))...)
		if sc.FSGroupChangePolicy != nil {
			allErrs = append(allErrs, validateOneOf(*sc.FSGroupChangePolicy, p.Child("fsGroupChangePolicy"),
				corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch)...)
		}
		allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
		allErrs = append(allErrs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
		allErrs = append(allErrs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
		if sc.SupplementalGroupsPolicy != nil {
			allErrs = append(allErrs, validateOneOf(*sc.SupplementalGroupsPolicy, p.Child("supplementalGroupsPolicy"),
				corev1.SupplementalGroupsPolicyMerge, corev1.SupplementalGroupsPolicyStrict)...)
		}
		if sc.SELinuxChangePolicy != nil {
			allErrs = append(allErrs, validateOneOf(*sc.SELinuxChangePolicy, p.Child("seLinuxChangePolicy"),
				corev1.SELinuxChangePolicyMountOption, corev1.SELinuxChangePolicyRecursive)...)
		}
	}
	if share := spec.ShareProcessNamespace; share != nil && *share && spec.HostPID {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("shareProcessNamespace"), *share, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	return allErrs
}

// hostUsers reports whether the pod's containers share the host's user
// namespace (hostUsers unset or true).
func hostUsers(spec *corev1.PodSpec) bool {
	return spec.HostUsers == nil || *spec.HostUsers
}

// validateContainerSecurityContext validates a container's
// securityContext. Kube relaxes one rule on updates of pods created
// before it (allowPrivilegeEscalation false with CAP_SYS_ADMIN); it is
// not relaxed here. Objects stored by builds before these checks, with a
// security context kube would have refused, fail their next update.
func validateContainerSecurityContext(sc *corev1.SecurityContext, hostUsers bool, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	allErrs := validateID(sc.RunAsUser, validation.IsValidUserID, p.Child("runAsUser"))
	allErrs = append(allErrs, validateID(sc.RunAsGroup, validation.IsValidGroupID, p.Child("runAsGroup"))...)
	if pm := sc.ProcMount; pm != nil {
		allErrs = append(allErrs, validateOneOf(*pm, p.Child("procMount"), corev1.DefaultProcMount, corev1.UnmaskedProcMount)...)
		if hostUsers && *pm == corev1.UnmaskedProcMount {
			allErrs = append(allErrs, field.Invalid(p.Child("procMount"), *pm, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	allErrs = append(allErrs, validateSeccompProfile(sc.SeccompProfile, p.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			allErrs = append(allErrs, field.Invalid(p, internalForm{sc}, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if c == "CAP_SYS_ADMIN" {
					allErrs = append(allErrs, field.Invalid(p, internalForm{sc}, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	allErrs = append(allErrs, validateWindowsOptions(sc.WindowsOptions, p.Child("windowsOptions"))...)
	return append(allErrs, validateAppArmorProfile(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
}

// validateOneOf is validateEnum for the optional enums, where kube has no
// Required: an empty value is one not supported.
func validateOneOf[T ~string](value T, p *field.Path, valid ...T) field.ErrorList {
	for _, v := range valid {
		if value == v {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p, value, valid)}
}

func validateID(id *int64, check func(int64) []string, p *field.Path) field.ErrorList {
	if id == nil {
		return nil
	}
	var allErrs field.ErrorList
	for _, msg := range check(*id) {
		allErrs = append(allErrs, field.Invalid(p, *id, msg))
	}
	return allErrs
}

func validateSeccompProfile(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var allErrs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		allErrs = append(allErrs, field.Required(p.Child("type"), "type is required when seccompProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("type"), sp.Type, []corev1.SeccompProfileType{
			corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	switch {
	case sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile == nil:
		allErrs = append(allErrs, field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
	case sp.Type == corev1.SeccompProfileTypeLocalhost:
		allErrs = append(allErrs, validateLocalDescendingPath(*sp.LocalhostProfile, p.Child("localhostProfile"))...)
	case sp.LocalhostProfile != nil:
		allErrs = append(allErrs, field.Invalid(p.Child("localhostProfile"), internalForm{sp}, "can only be set when seccomp type is Localhost"))
	}
	return allErrs
}

// maxAppArmorProfileLength is PATH_MAX - 1 (kube's bound).
const maxAppArmorProfileLength = 4095

func validateAppArmorProfile(profile *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if profile == nil {
		return nil
	}
	var allErrs field.ErrorList
	local := profile.LocalhostProfile
	switch profile.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		switch {
		case local == nil:
			allErrs = append(allErrs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		case strings.TrimSpace(*local) != *local:
			allErrs = append(allErrs, field.Invalid(p.Child("localhostProfile"), *local, "must not be padded with whitespace"))
		case *local == "":
			allErrs = append(allErrs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
		if local != nil && len(*local) > maxAppArmorProfileLength {
			allErrs = append(allErrs, field.TooLong(p.Child("localhostProfile"), "", maxAppArmorProfileLength))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if local != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("localhostProfile"), local, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		allErrs = append(allErrs, field.Required(p.Child("type"), "type is required when appArmorProfile is set"))
	default:
		allErrs = append(allErrs, field.NotSupported(p.Child("type"), profile.Type, []corev1.AppArmorProfileType{
			corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return allErrs
}

// Bounds of the Windows options (kube's).
const (
	maxGMSACredentialSpecKiB     = 64
	maxRunAsUserNameDomainLength = 256
	maxRunAsUserNameUserLength   = 104
)

func validateWindowsOptions(o *corev1.WindowsSecurityContextOptions, p *field.Path) field.ErrorList {
	if o == nil {
		return nil
	}
	var allErrs field.ErrorList
	if name := o.GMSACredentialSpecName; name != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*name) {
			allErrs = append(allErrs, field.Invalid(p.Child("gmsaCredentialSpecName"), *name, msg))
		}
	}
	if spec := o.GMSACredentialSpec; spec != nil {
		switch {
		case *spec == "":
			allErrs = append(allErrs, field.Invalid(p.Child("gmsaCredentialSpec"), *spec, "gmsaCredentialSpec cannot be an empty string"))
		case len(*spec) > maxGMSACredentialSpecKiB*1024:
			allErrs = append(allErrs, field.Invalid(p.Child("gmsaCredentialSpec"), *spec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecKiB)))
		}
	}
	if user := o.RunAsUserName; user != nil {
		for _, msg := range runAsUserNameErrors(*user) {
			allErrs = append(allErrs, field.Invalid(p.Child("runAsUserName"), *user, msg))
		}
	}
	return allErrs
}

// runAsUserNameErrors checks a Windows user name, [DOMAIN\]USER, as kube
// does: a domain is a NetBIOS name or a DNS name; a user name is short,
// not only dots and spaces, and without the characters Windows forbids.
func runAsUserNameErrors(name string) []string {
	switch {
	case name == "":
		return []string{"runAsUserName cannot be an empty string"}
	case strings.ContainsFunc(name, isControl):
		return []string{"runAsUserName cannot contain control characters"}
	case strings.Count(name, `\`) > 1:
		return []string{"runAsUserName cannot contain more than one backslash"}
	}
	domain, user, hasDomain := strings.Cut(name, `\`)
	if !hasDomain {
		domain, user = "", name
	}
	var msgs []string
	if len(domain) >= maxRunAsUserNameDomainLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength))
	}
	if hasDomain && !isNetBIOSName(domain) && !isWindowsDNSDomain(domain) {
		msgs = append(msgs, "runAsUserName's Domain doesn't match the NetBios nor the DNS format")
	}
	if user == "" {
		msgs = append(msgs, "runAsUserName's User cannot be empty")
	} else if len(user) > maxRunAsUserNameUserLength {
		msgs = append(msgs, fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength))
	}
	if user != "" && strings.Trim(user, ". ") == "" {
		msgs = append(msgs, "runAsUserName's User cannot contain only periods or spaces")
	}
	if strings.ContainsAny(user, `"/\:;|=,+*?<>@[]`) {
		msgs = append(msgs, `runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`)
	}
	return msgs
}

// isControl is POSIX's [[:cntrl:]], which kube's check uses: ASCII
// control characters.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// isNetBIOSName: 1 to 15 characters, none of \/:*?"<>|, not starting
// with a dot.
func isNetBIOSName(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= 1 && n <= 15 && s[0] != '.' && !strings.ContainsAny(s, `\/:*?"<>|`)
}

// isWindowsDNSDomain: dot-separated labels of letters (either case),
// digits and inner dashes, each of 1 to 63 characters.
func isWindowsDNSDomain(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// internalForm makes a refused struct print in a field error as kube's
// does: kube's validation holds its internal types, which have no JSON
// tags, so the error shows every field under its Go name ("Type", not
// "type"), empty ones included. corev1's types have the same Go fields.
type internalForm struct{ v any }

func (f internalForm) MarshalJSON() ([]byte, error) {
	return appendInternalJSON(nil, reflect.ValueOf(f.v))
}

func appendInternalJSON(dst []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendInternalJSON(dst, v.Elem())
	case reflect.Struct:
		dst = append(dst, '{')
		for i := range v.NumField() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendQuote(dst, v.Type().Field(i).Name)
			dst = append(dst, ':')
			var err error
			if dst, err = appendInternalJSON(dst, v.Field(i)); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case reflect.Slice:
		if v.IsNil() {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i := range v.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendInternalJSON(dst, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	default:
		b, err := json.Marshal(v.Interface())
		return append(dst, b...), err
	}
}

// eachContainer calls f with every container of spec and its path, in
// kube's order: init containers, containers, ephemeral containers.
func eachContainer(spec *corev1.PodSpec, fldPath *field.Path, f func(sc *corev1.SecurityContext, p *field.Path)) {
	for i := range spec.InitContainers {
		f(spec.InitContainers[i].SecurityContext, fldPath.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		f(spec.Containers[i].SecurityContext, fldPath.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		f(spec.EphemeralContainers[i].SecurityContext, fldPath.Child("ephemeralContainers").Index(i))
	}
}

// validateHostProcess: Windows host process containers come all or none
// in a pod, agree with the pod's setting, and need the host network.
// (--allow-privileged is always true here, so they are never refused for
// it.)
func validateHostProcess(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var podHostProcess *bool
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		podHostProcess = sc.WindowsOptions.HostProcess
	}
	var allErrs field.ErrorList
	containers, hostProcess := 0, 0
	eachContainer(spec, fldPath, func(sc *corev1.SecurityContext, p *field.Path) {
		containers++
		var own *bool
		if sc != nil && sc.WindowsOptions != nil {
			own = sc.WindowsOptions.HostProcess
		}
		if podHostProcess != nil && own != nil && *podHostProcess != *own {
			allErrs = append(allErrs, field.Invalid(p.Child("securityContext", "windowsOptions", "hostProcess"), *own,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podHostProcess)))
		}
		if (own != nil && *own) || (own == nil && podHostProcess != nil && *podHostProcess) {
			hostProcess++
		}
	})
	if hostProcess == 0 {
		return allErrs
	}
	if hostProcess != containers {
		allErrs = append(allErrs, field.Invalid(fldPath, "", "If pod contains any hostProcess containers then all containers must be HostProcess containers"))
	}
	if !spec.HostNetwork {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("hostNetwork"), false, "hostNetwork must be true if pod contains any hostProcess containers"))
	}
	return allErrs
}

// validateLinuxOptions: a pod for Linux has no Windows options.
func validateLinuxOptions(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	const msg = "windows options cannot be set for a linux pod"
	var allErrs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("securityContext", "windowsOptions"), msg))
	}
	eachContainer(spec, fldPath, func(sc *corev1.SecurityContext, p *field.Path) {
		if sc != nil && sc.WindowsOptions != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("securityContext", "windowsOptions"), msg))
		}
	})
	return allErrs
}

// windowsForbidden is what a pod for Windows may not set (kube's
// validateWindows), in kube's order: the fields of its security context,
// then of the pod, then each container's.
var (
	windowsForbiddenPod = []struct {
		name string
		set  func(*corev1.PodSecurityContext) bool
	}{
		{"appArmorProfile", func(sc *corev1.PodSecurityContext) bool { return sc.AppArmorProfile != nil }},
		{"seLinuxOptions", func(sc *corev1.PodSecurityContext) bool { return sc.SELinuxOptions != nil }},
		{"seccompProfile", func(sc *corev1.PodSecurityContext) bool { return sc.SeccompProfile != nil }},
		{"fsGroup", func(sc *corev1.PodSecurityContext) bool { return sc.FSGroup != nil }},
		{"fsGroupChangePolicy", func(sc *corev1.PodSecurityContext) bool { return sc.FSGroupChangePolicy != nil }},
		{"sysctls", func(sc *corev1.PodSecurityContext) bool { return len(sc.Sysctls) > 0 }},
		{"runAsUser", func(sc *corev1.PodSecurityContext) bool { return sc.RunAsUser != nil }},
		{"runAsGroup", func(sc *corev1.PodSecurityContext) bool { return sc.RunAsGroup != nil }},
		{"supplementalGroups", func(sc *corev1.PodSecurityContext) bool { return sc.SupplementalGroups != nil }},
		{"supplementalGroupsPolicy", func(sc *corev1.PodSecurityContext) bool { return sc.SupplementalGroupsPolicy != nil }},
		{"seLinuxChangePolicy", func(sc *corev1.PodSecurityContext) bool { return sc.SELinuxChangePolicy != nil }},
	}
	windowsForbiddenSpec = []struct {
		name string
		set  func(*corev1.PodSpec) bool
	}{
		{"hostUsers", func(s *corev1.PodSpec) bool { return s.HostUsers != nil }},
		{"hostPID", func(s *corev1.PodSpec) bool { return s.HostPID }},
		{"hostIPC", func(s *corev1.PodSpec) bool { return s.HostIPC }},
		{"shareProcessNamespace", func(s *corev1.PodSpec) bool { return s.ShareProcessNamespace != nil }},
	}
	windowsForbiddenContainer = []struct {
		name string
		set  func(*corev1.SecurityContext) bool
	}{
		{"appArmorProfile", func(sc *corev1.SecurityContext) bool { return sc.AppArmorProfile != nil }},
		{"seLinuxOptions", func(sc *corev1.SecurityContext) bool { return sc.SELinuxOptions != nil }},
		{"seccompProfile", func(sc *corev1.SecurityContext) bool { return sc.SeccompProfile != nil }},
		{"capabilities", func(sc *corev1.SecurityContext) bool { return sc.Capabilities != nil }},
		{"readOnlyRootFilesystem", func(sc *corev1.SecurityContext) bool { return sc.ReadOnlyRootFilesystem != nil }},
		{"privileged", func(sc *corev1.SecurityContext) bool { return sc.Privileged != nil }},
		{"allowPrivilegeEscalation", func(sc *corev1.SecurityContext) bool { return sc.AllowPrivilegeEscalation != nil }},
		{"procMount", func(sc *corev1.SecurityContext) bool { return sc.ProcMount != nil }},
		{"runAsUser", func(sc *corev1.SecurityContext) bool { return sc.RunAsUser != nil }},
		{"runAsGroup", func(sc *corev1.SecurityContext) bool { return sc.RunAsGroup != nil }},
	}
)

// validateWindowsPod: a pod for Windows sets none of the Linux-only
// fields.
func validateWindowsPod(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	const msg = "cannot be set for a windows pod"
	var allErrs field.ErrorList
	if sc := spec.SecurityContext; sc != nil {
		for _, f := range windowsForbiddenPod {
			if f.set(sc) {
				allErrs = append(allErrs, field.Forbidden(fldPath.Child("securityContext", f.name), msg))
			}
		}
	}
	for _, f := range windowsForbiddenSpec {
		if f.set(spec) {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(f.name), msg))
		}
	}
	eachContainer(spec, fldPath, func(sc *corev1.SecurityContext, p *field.Path) {
		if sc == nil {
			return
		}
		for _, f := range windowsForbiddenContainer {
			if f.set(sc) {
				allErrs = append(allErrs, field.Forbidden(p.Child("securityContext", f.name), msg))
			}
		}
	})
	return allErrs
}
