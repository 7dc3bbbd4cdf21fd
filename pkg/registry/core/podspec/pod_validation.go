package podspec

import (
	"fmt"
	"math"
	"strings"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The validation of pods and pod templates follows kube's
// (pkg/apis/core/validation): the same checks in the same order, with the
// same field paths and messages, for the fields users set. Rules for rarely
// used parts of the spec (affinity terms, resource claims) are not
// ported; see the package's tests for what is covered.

// DNS limits of a pod's dnsConfig.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

// ValidatePodCreate validates a pod about to be created.
func ValidatePodCreate(pod *corev1.Pod) field.ErrorList {
	allErrs := validatePodMetadataAndSpec(pod)
	specPath := field.NewPath("spec")
	if len(pod.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return allErrs
}

// validatePodMetadataAndSpec validates what a pod has beyond a template.
func validatePodMetadataAndSpec(pod *corev1.Pod) field.ErrorList {
	specPath := field.NewPath("spec")
	allErrs := corevalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	allErrs = append(allErrs, validatePodSpec(&pod.Spec, &pod.ObjectMeta, specPath, true)...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, source := range v.Projected.Sources {
				if source.ServiceAccountToken != nil {
					allErrs = append(allErrs, field.Forbidden(specPath.Child("volumes").Index(vi).Child("projected", "sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(*g, specPath.Child("terminationGracePeriodSeconds"))...)
	}
	allErrs = append(allErrs, validateImageWhitespace(pod.Spec.Containers, specPath.Child("containers"))...)
	return append(allErrs, validateImageWhitespace(pod.Spec.InitContainers, specPath.Child("initContainers"))...)
}

// validateImageWhitespace: kube lets templates keep " " images (some tools
// use it as a placeholder), but not pods.
func validateImageWhitespace(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range containers {
		if len(c.Image) != len(strings.TrimSpace(c.Image)) {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
	}
	return allErrs
}

// ValidatePodTemplateSpec validates the pod template of a workload
// (replicaset, deployment, ...) or of a PodTemplate.
func ValidatePodTemplateSpec(spec *corev1.PodTemplateSpec, fldPath *field.Path) field.ErrorList {
	allErrs := metav1validation.ValidateLabels(spec.Labels, fldPath.Child("labels"))
	allErrs = append(allErrs, apivalidation.ValidateAnnotations(spec.Annotations, fldPath.Child("annotations"))...)
	allErrs = append(allErrs, validatePodSpec(&spec.Spec, nil, fldPath.Child("spec"), false)...)
	if len(spec.Spec.EphemeralContainers) > 0 {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return allErrs
}

// ValidatePodTemplateSpecForWorkload validates the template of a workload
// whose pods restart forever and match its selector (kind names the
// workload in messages: "ReplicaSet", "Deployment", ...).
func ValidatePodTemplateSpecForWorkload(template *corev1.PodTemplateSpec, selector func(labels map[string]string) (matches, empty bool), kind string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if matches, empty := selector(template.Labels); !empty && !matches {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("metadata", "labels"), template.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, ValidatePodTemplateSpec(template, fldPath)...)
	allErrs = append(allErrs, ValidateWorkloadPodSpec(&template.Spec, kind, fldPath.Child("spec"))...)
	return allErrs
}

// ValidateWorkloadPodSpec checks what controllers that keep their pods
// running require of the template: restartPolicy Always and no
// activeDeadlineSeconds.
func ValidateWorkloadPodSpec(spec *corev1.PodSpec, kind string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.RestartPolicy != corev1.RestartPolicyAlways {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("restartPolicy"), spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if spec.ActiveDeadlineSeconds != nil {
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("activeDeadlineSeconds"), fmt.Sprintf("activeDeadlineSeconds in %s is not Supported", kind)))
	}
	return allErrs
}

// validatePodSpec validates a pod spec. podMeta is the pod's metadata (nil
// for templates); isPod enables the checks kube makes only on pods.
func validatePodSpec(spec *corev1.PodSpec, podMeta *metav1.ObjectMeta, fldPath *field.Path, isPod bool) field.ErrorList {
	var allErrs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		allErrs = append(allErrs, field.Required(fldPath.Child("terminationGracePeriodSeconds"), ""))
	}
	gracePeriod := spec.TerminationGracePeriodSeconds
	vols, vErrs := validateVolumes(spec.Volumes, podMeta, fldPath.Child("volumes"))
	allErrs = append(allErrs, vErrs...)
	allErrs = append(allErrs, validateContainers(spec.Containers, vols, hostUsers(spec), gracePeriod, fldPath.Child("containers"))...)
	allErrs = append(allErrs, validateInitContainers(spec.InitContainers, spec.Containers, vols, hostUsers(spec), gracePeriod, fldPath.Child("initContainers"))...)
	if isPod {
		allErrs = append(allErrs, validateEphemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, hostUsers(spec), fldPath.Child("ephemeralContainers"))...)
	}
	allErrs = append(allErrs, validateHostNetworkPorts(spec, fldPath, isPod)...)
	allErrs = append(allErrs, validateEnum(spec.RestartPolicy, fldPath.Child("restartPolicy"),
		corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)...)
	allErrs = append(allErrs, validateEnum(spec.DNSPolicy, fldPath.Child("dnsPolicy"),
		corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)...)
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.NodeSelector, fldPath.Child("nodeSelector"))...)
	allErrs = append(allErrs, validatePodSecurityContext(spec, fldPath)...)
	allErrs = append(allErrs, validatePodSpecReferences(spec, fldPath)...)
	allErrs = append(allErrs, validateTopologySpreadConstraints(spec.TopologySpreadConstraints, fldPath.Child("topologySpreadConstraints"))...)
	allErrs = append(allErrs, validateHostProcess(spec, fldPath)...)
	allErrs = append(allErrs, validateHostnameOverride(spec, fldPath)...)
	allErrs = append(allErrs, validatePodSpecNames(spec, fldPath)...)
	if spec.OS != nil {
		if spec.OS.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("os", "name"), ""))
		} else if spec.OS.Name != corev1.Linux && spec.OS.Name != corev1.Windows {
			allErrs = append(allErrs, field.NotSupported(fldPath.Child("os"), spec.OS.Name, []string{string(corev1.Linux), string(corev1.Windows)}))
		} else if spec.OS.Name == corev1.Linux {
			allErrs = append(allErrs, validateLinuxOptions(spec, fldPath)...)
		} else {
			allErrs = append(allErrs, validateWindowsPod(spec, fldPath)...)
		}
	}
	return allErrs
}

// validatePodSpecReferences validates what a pod spec names of other
// objects and conditions: pull secrets, DNS configuration, readiness and
// scheduling gates (in kube's order of validatePodSpec).
func validatePodSpecReferences(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range spec.ImagePullSecrets {
		if s != (corev1.LocalObjectReference{Name: s.Name}) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("imagePullSecrets").Index(i), s, "only name may be set"))
		}
	}
	allErrs = append(allErrs, validatePodDNSConfig(spec.DNSConfig, spec.DNSPolicy, fldPath.Child("dnsConfig"))...)
	for i, g := range spec.ReadinessGates {
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(string(g.ConditionType), fldPath.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	seenGates := sets.New[string]()
	for i, g := range spec.SchedulingGates {
		p := fldPath.Child("schedulingGates").Index(i)
		allErrs = append(allErrs, corevalidation.ValidateQualifiedName(g.Name, p)...)
		if seenGates.Has(g.Name) {
			allErrs = append(allErrs, field.Duplicate(p, g.Name))
		}
		seenGates.Insert(g.Name)
	}
	return allErrs
}

// validatePodSpecNames validates the names a pod spec gives: its service
// account, node, host and subdomain, host aliases, priority and runtime
// classes, with its tolerations and deadline (in kube's order of
// validatePodSpec).
func validatePodSpecNames(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.ServiceAccountName != "" {
		for _, msg := range apivalidation.ValidateServiceAccountName(spec.ServiceAccountName, false) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("serviceAccountName"), spec.ServiceAccountName, msg))
		}
	}
	if sa := spec.DeprecatedServiceAccount; sa != spec.ServiceAccountName { //nolint:staticcheck // kube checks the alias
		allErrs = append(allErrs, field.Invalid(fldPath.Child("deprecatedServiceAccount"), sa, fmt.Sprintf("must be the same as serviceAccountName: %q", spec.ServiceAccountName)))
	}
	allErrs = append(allErrs, validateDNSSubdomainName(spec.NodeName, fldPath.Child("nodeName"))...)
	if d := spec.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > math.MaxInt32) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("activeDeadlineSeconds"), *d, validation.InclusiveRangeError(1, math.MaxInt32)))
	}
	if spec.Hostname != "" {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(spec.Hostname, fldPath.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(spec.Subdomain, fldPath.Child("subdomain"))...)
	}
	allErrs = append(allErrs, ValidateTolerations(spec.Tolerations, fldPath.Child("tolerations"))...)
	for i, a := range spec.HostAliases {
		p := fldPath.Child("hostAliases").Index(i)
		allErrs = append(allErrs, validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)...)
		for j, h := range a.Hostnames {
			allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(h, p.Child("hostnames").Index(j))...)
		}
	}
	allErrs = append(allErrs, validateDNSSubdomainName(spec.PriorityClassName, fldPath.Child("priorityClassName"))...)
	if rc := spec.RuntimeClassName; rc != nil {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Subdomain(*rc, fldPath.Child("runtimeClassName"))...)
	}
	if p := spec.PreemptionPolicy; p != nil {
		allErrs = append(allErrs, validateEnum(*p, fldPath.Child("preemptionPolicy"), corev1.PreemptLowerPriority, corev1.PreemptNever)...)
	}
	return allErrs
}

// validateEnum requires value to be one of valid: "Required value" when
// empty, "Unsupported value" otherwise, as kube's enum checks.
func validateEnum[T ~string](value T, fldPath *field.Path, valid ...T) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	for _, v := range valid {
		if value == v {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath, value, valid)}
}

// validateHostNetworkPorts: on the host network a container port is a host
// port. Pods must say so (defaulting does); templates may leave it 0.
func validateHostNetworkPorts(spec *corev1.PodSpec, fldPath *field.Path, isPod bool) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var allErrs field.ErrorList
	for i, c := range spec.Containers {
		for j, p := range c.Ports {
			if (isPod || p.HostPort != 0) && p.HostPort != p.ContainerPort {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"),
					p.HostPort, "must match `containerPort` when `hostNetwork` is true"))
			}
		}
	}
	return allErrs
}

func validatePodDNSConfig(cfg *corev1.PodDNSConfig, policy corev1.DNSPolicy, fldPath *field.Path) field.ErrorList {
	if policy == corev1.DNSNone {
		if cfg == nil {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(cfg.Nameservers) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if cfg == nil {
		return nil
	}
	var allErrs field.ErrorList
	if len(cfg.Nameservers) > maxDNSNameservers {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("nameservers"), cfg.Nameservers, fmt.Sprintf("must not have more than %v nameservers", maxDNSNameservers)))
	}
	for i, ns := range cfg.Nameservers {
		allErrs = append(allErrs, validation.IsValidIPForLegacyField(fldPath.Child("nameservers").Index(i), ns, true, nil)...)
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v search paths", maxDNSSearchPaths)))
	}
	if len(strings.Join(cfg.Searches, " ")) > maxDNSSearchListChars {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("searches"), cfg.Searches, fmt.Sprintf("must not have more than %v characters (including spaces) in the search list", maxDNSSearchListChars)))
	}
	for i, s := range cfg.Searches {
		if s == "." {
			continue
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range cfg.Options {
		if o.Name == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("options").Index(i), "must not be empty"))
		}
	}
	return allErrs
}

func validateHostnameOverride(spec *corev1.PodSpec, fldPath *field.Path) field.ErrorList {
	if spec.HostnameOverride == nil {
		return nil
	}
	p := fldPath.Child("hostnameOverride")
	var allErrs field.ErrorList
	if spec.SetHostnameAsFQDN != nil && *spec.SetHostnameAsFQDN {
		allErrs = append(allErrs, field.Forbidden(p, "may not be specified when setHostnameAsFQDN is true"))
	}
	if spec.HostNetwork {
		allErrs = append(allErrs, field.Forbidden(p, "may not be specified when hostNetwork is true"))
	}
	if len(*spec.HostnameOverride) > 64 {
		allErrs = append(allErrs, field.TooLong(p, "", 64))
	}
	return append(allErrs, corevalidation.ValidateDNS1123Subdomain(*spec.HostnameOverride, p)...)
}

func ValidateTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Operator,
				"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			allErrs = append(allErrs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if errs := validation.IsValidLabelValue(t.Value); len(errs) != 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, strings.Join(errs, ";")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		case corev1.TolerationOpLt, corev1.TolerationOpGt:
			// Numeric comparisons are behind a gate kube 1.37 leaves
			// off; its refusal names them anyway.
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists, corev1.TolerationOpLt, corev1.TolerationOpGt}))
		default:
			allErrs = append(allErrs, field.NotSupported(p.Child("operator"), t.Operator,
				[]corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Effect != "" {
			allErrs = append(allErrs, validateEnum(t.Effect, p.Child("effect"),
				corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
		}
	}
	return allErrs
}

func validateTopologySpreadConstraints(constraints []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, c := range constraints {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			allErrs = append(allErrs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			allErrs = append(allErrs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			allErrs = append(allErrs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		allErrs = append(allErrs, validateEnum(c.WhenUnsatisfiable, p.Child("whenUnsatisfiable"), corev1.DoNotSchedule, corev1.ScheduleAnyway)...)
		pair := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if seen.Has(pair) {
			allErrs = append(allErrs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
		}
		seen.Insert(pair)
	}
	return allErrs
}

// validateDNSSubdomainName validates an optional object name (nodeName,
// priorityClassName) as a DNS subdomain.
func validateDNSSubdomainName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	var allErrs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	return allErrs
}
