package podspec

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Warnings for pods and pod templates, as kube-apiserver v1.37 sends them
// (kube's pkg/api/pod/warnings.go): fields that validation accepts but that
// are deprecated, ignored, or most likely not what the client meant. The
// texts are kube's word for word, since clients and people grep for them.
//
// Pods are checked on create only (kube skips pod updates: people rarely
// write pods by hand, and kubelets update them often). Workloads check
// their template on create, and on update when the template (or, for
// most, the generation) changed, so that an unrelated write does not
// repeat warnings about a template the client did not touch.

// deprecatedNodeLabels are the node labels kube warns about in selectors,
// with the message that follows the field path.
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// DeprecatedNodeLabel returns kube's warning text for a deprecated node
// label key (what follows the field path), and whether key is one.
func DeprecatedNodeLabel(key string) (string, bool) {
	msg, ok := deprecatedNodeLabels[key]
	return msg, ok
}

// deprecatedPodAnnotations are annotations the kubelet stopped reading,
// in the order kube reports them.
var deprecatedPodAnnotations = []struct{ key, message string }{
	{`scheduler.alpha.kubernetes.io/critical-pod`, `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{`security.alpha.kubernetes.io/sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
	{`security.alpha.kubernetes.io/unsafe-sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
}

// Annotations that fields replaced.
const (
	seccompPodAnnotation              = "seccomp.security.alpha.kubernetes.io/pod"
	seccompContainerAnnotationPrefix  = "container.seccomp.security.alpha.kubernetes.io/"
	appArmorContainerAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/"
	betaStorageClassAnnotation        = "volume.beta.kubernetes.io/storage-class"
)

// removedVolumePlugins are the in-tree volume plugins kube warns about, in
// the order it checks them, each with the JSON name of its field.
var removedVolumePlugins = []struct {
	name, message string
	inPod         func(*corev1.VolumeSource) bool
	inPV          func(*corev1.PersistentVolumeSource) bool // nil: kube does not warn on PVs
}{
	{"photonPersistentDisk", "deprecated in v1.11, non-functional in v1.16+",
		func(v *corev1.VolumeSource) bool { return v.PhotonPersistentDisk != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.PhotonPersistentDisk != nil }},
	// gitRepo still works where the GitRepoVolumeDriver feature is
	// enabled, which it is not by default since v1.33.
	{"gitRepo", "deprecated in v1.11, and disabled by default in v1.33+",
		func(v *corev1.VolumeSource) bool { return v.GitRepo != nil }, nil},
	{"scaleIO", "deprecated in v1.16, non-functional in v1.22+",
		func(v *corev1.VolumeSource) bool { return v.ScaleIO != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.ScaleIO != nil }},
	{"flocker", "deprecated in v1.22, non-functional in v1.25+",
		func(v *corev1.VolumeSource) bool { return v.Flocker != nil }, nil},
	{"storageOS", "deprecated in v1.22, non-functional in v1.25+",
		func(v *corev1.VolumeSource) bool { return v.StorageOS != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.StorageOS != nil }},
	{"quobyte", "deprecated in v1.22, non-functional in v1.25+",
		func(v *corev1.VolumeSource) bool { return v.Quobyte != nil }, nil},
	{"glusterfs", "deprecated in v1.25, non-functional in v1.26+",
		func(v *corev1.VolumeSource) bool { return v.Glusterfs != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.Glusterfs != nil }},
	{"cephfs", "deprecated in v1.28, non-functional in v1.31+",
		func(v *corev1.VolumeSource) bool { return v.CephFS != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.CephFS != nil }},
	{"rbd", "deprecated in v1.28, non-functional in v1.31+",
		func(v *corev1.VolumeSource) bool { return v.RBD != nil },
		func(v *corev1.PersistentVolumeSource) bool { return v.RBD != nil }},
}

// PodTemplateWarnings returns the warnings for a workload's pod template
// found at path (spec.template; template for PodTemplates). A nil
// template has none.
func PodTemplateWarnings(path *field.Path, template *corev1.PodTemplateSpec) []string {
	if template == nil {
		return nil
	}
	return podSpecWarnings(path, &template.ObjectMeta, &template.Spec)
}

// PodWarnings returns the warnings for a new pod. Its AppArmor annotations
// are warned about when they are copied into fields (ApplyAppArmorAnnotations).
func PodWarnings(pod *corev1.Pod) []string {
	return podSpecWarnings(nil, &pod.ObjectMeta, &pod.Spec)
}

// podSpecWarnings checks a pod's metadata and spec; base is nil for a pod
// (paths start at spec) and the template's path for a template. The
// warnings come in kube's order.
func podSpecWarnings(base *field.Path, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []string {
	var w warnings
	specPath := base.Child("spec")
	annotationsPath := base.Child("metadata", "annotations")

	w.add(placementWarnings(specPath, spec)...)
	for _, d := range deprecatedPodAnnotations {
		if _, ok := meta.Annotations[d.key]; ok {
			w.addf("%s: %s", annotationsPath.Key(d.key), d.message)
		}
	}
	w.add(volumeWarnings(specPath, spec.Volumes)...)
	w.add(duplicateListWarnings(specPath, spec)...)
	w.add(fractionalBytes(specPath.Child("overhead"), spec.Overhead, corev1.ResourceMemory)...)
	w.add(fractionalBytes(specPath.Child("overhead"), spec.Overhead, corev1.ResourceEphemeralStorage)...)
	w.add(containerWarnings(base, meta, spec)...)
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		w.addf("%s: must be >= 0; negative values are invalid and will be treated as 1", specPath.Child("terminationGracePeriodSeconds"))
	}
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			p := specPath.Child("affinity", "podAffinity")
			w.add(podAffinityTermWarnings(p, pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			p := specPath.Child("affinity", "podAntiAffinity")
			w.add(podAffinityTermWarnings(p, pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
	}
	return w
}

// placementWarnings checks the node labels a pod is placed by: its node
// selector, node affinity and topology spread constraints.
func placementWarnings(specPath *field.Path, spec *corev1.PodSpec) []string {
	var w warnings
	// Kube walks the nodeSelector map in random order; sorted keys give
	// the same set in a stable order.
	for _, k := range sortedKeys(spec.NodeSelector) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			w.addf("%s: %s", specPath.Child("nodeSelector").Key(k), msg)
		}
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		p := specPath.Child("affinity", "nodeAffinity")
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for i := range r.NodeSelectorTerms {
				w.add(NodeSelectorTermWarnings(&r.NodeSelectorTerms[i], p.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(i))...)
			}
		}
		for i := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			term := &a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].Preference
			w.add(NodeSelectorTermWarnings(term, p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("preference"))...)
		}
	}
	for i, c := range spec.TopologySpreadConstraints {
		p := specPath.Child("topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[c.TopologyKey]; ok {
			w.addf("%s: %s is %s", p.Child("topologyKey"), c.TopologyKey, msg)
		}
		if c.LabelSelector == nil {
			w.addf("%s: a null labelSelector results in matching no pod", p.Child("labelSelector"))
		}
	}
	return w
}

// volumeWarnings checks volumes of removed plugins, ephemeral volumes'
// claim templates and overlapping paths.
func volumeWarnings(specPath *field.Path, volumes []corev1.Volume) []string {
	var w warnings
	for i := range volumes {
		v := &volumes[i].VolumeSource
		p := specPath.Child("volumes").Index(i)
		for _, plugin := range removedVolumePlugins {
			if plugin.inPod(v) {
				w.addf("%s: %s", p.Child(plugin.name), plugin.message)
			}
			// kube checks ephemeral volumes between glusterfs and cephfs.
			if plugin.name == "glusterfs" && v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil {
				w.add(PVCSpecWarnings(p.Child("ephemeral", "volumeClaimTemplate", "spec"), &v.Ephemeral.VolumeClaimTemplate.Spec)...)
			}
		}
	}
	w.add(overlappingPathWarnings(volumes)...)
	return w
}

// duplicateListWarnings checks host aliases for repeated IPs and image pull
// secrets for repeated and empty names.
func duplicateListWarnings(specPath *field.Path, spec *corev1.PodSpec) []string {
	var w warnings
	seen := map[string]bool{}
	for i, a := range spec.HostAliases {
		if seen[a.IP] {
			w.addf("%s: duplicate ip %q", specPath.Child("hostAliases").Index(i).Child("ip"), a.IP)
		}
		seen[a.IP] = true
	}
	seen = map[string]bool{}
	for i, s := range spec.ImagePullSecrets {
		if seen[s.Name] {
			w.addf("%s: duplicate name %q", specPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
		seen[s.Name] = true
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			w.addf("%s: invalid empty name %q", specPath.Child("imagePullSecrets").Index(i).Child("name"), s.Name)
		}
	}
	return w
}

// containerWarnings checks the seccomp and AppArmor annotations that fields
// replaced, and each container's resources, environment and ports.
func containerWarnings(base *field.Path, meta *metav1.ObjectMeta, spec *corev1.PodSpec) []string {
	var w warnings
	specPath := base.Child("spec")
	annotationsPath := base.Child("metadata", "annotations")
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := meta.Annotations[seccompPodAnnotation]; ok {
			w.addf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotationsPath.Key(seccompPodAnnotation))
		}
	}
	podAppArmor := spec.SecurityContext != nil && spec.SecurityContext.AppArmorProfile != nil
	containers := podContainers(spec, specPath)
	for _, c := range containers {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			if key := seccompContainerAnnotationPrefix + c.Name; hasKey(meta.Annotations, key) {
				w.addf(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotationsPath.Key(key))
			}
		}
		// Pods get this warning when kube copies the annotation into the
		// field on create; templates keep the annotation, so warn here.
		if base != nil && !podAppArmor && (c.SecurityContext == nil || c.SecurityContext.AppArmorProfile == nil) {
			if key := appArmorContainerAnnotationPrefix + c.Name; hasKey(meta.Annotations, key) {
				w.addf(`%s: deprecated since v1.30; use the "appArmorProfile" field instead`, annotationsPath.Key(key))
			}
		}
		w.add(fractionalBytes(c.path.Child("resources", "limits"), c.Resources.Limits, corev1.ResourceMemory)...)
		w.add(fractionalBytes(c.path.Child("resources", "requests"), c.Resources.Requests, corev1.ResourceMemory)...)
		w.add(fractionalBytes(c.path.Child("resources", "limits"), c.Resources.Limits, corev1.ResourceEphemeralStorage)...)
		w.add(fractionalBytes(c.path.Child("resources", "requests"), c.Resources.Requests, corev1.ResourceEphemeralStorage)...)
		w.add(duplicateEnvWarnings(c.path, c.Env)...)
	}
	w.add(portWarnings(containers)...)
	return w
}

// warnings accumulates warning texts.
type warnings []string

func (w *warnings) add(texts ...string) { *w = append(*w, texts...) }

func (w *warnings) addf(format string, args ...any) { *w = append(*w, fmt.Sprintf(format, args...)) }

// NodeSelectorTermWarnings flags deprecated node labels in a term's
// expressions (matchFields name fields, not labels).
func NodeSelectorTermWarnings(term *corev1.NodeSelectorTerm, path *field.Path) []string {
	var w warnings
	for i, e := range term.MatchExpressions {
		if msg, ok := deprecatedNodeLabels[e.Key]; ok {
			w.addf("%s: %s is %s", path.Child("matchExpressions").Index(i).Child("key"), e.Key, msg)
		}
	}
	return w
}

// podAffinityTermWarnings flags terms without a label selector: a null
// selector matches no pod, unlike an empty one.
func podAffinityTermWarnings(path *field.Path, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) []string {
	var w warnings
	for i, t := range required {
		if t.LabelSelector == nil {
			w.addf("%s: a null labelSelector results in matching no pod", path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i).Child("labelSelector"))
		}
	}
	for i, t := range preferred {
		if t.PodAffinityTerm.LabelSelector == nil {
			w.addf("%s: a null labelSelector results in matching no pod", path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm", "labelSelector"))
		}
	}
	return w
}

// fractionalBytes flags a byte quantity with a fraction of a byte ("1500m"),
// which the kubelet rounds in ways the client did not mean.
func fractionalBytes(path *field.Path, list corev1.ResourceList, name corev1.ResourceName) []string {
	q, ok := list[name]
	if !ok || q.MilliValue()%1000 == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: fractional byte value %q is invalid, must be an integer", path.Key(string(name)), q.String())}
}

// duplicateEnvWarnings flags a variable defined again in a way that hides
// the earlier definition: server-side apply merges env by name, so one of
// them may be dropped. Redefining X as a value that refers to $(X) (and is
// not just "$(X)") builds on the earlier value and is fine.
func duplicateEnvWarnings(path *field.Path, env []corev1.EnvVar) []string {
	var w warnings
	seen := map[string]bool{}
	for i, e := range env {
		if !seen[e.Name] {
			seen[e.Name] = true
			continue
		}
		ref := "$(" + e.Name + ")"
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			w.addf("%s: hides previous definition of %q, which may be dropped when using apply", path.Child("env").Index(i), e.Name)
		}
	}
	return w
}

// portWarnings compares the ports of all containers: the same port and
// protocol declared twice is either redundant or ambiguous.
func portWarnings(containers []containerAt) []string {
	type declared struct {
		path *field.Path
		port corev1.ContainerPort
	}
	var w warnings
	byPort := map[string][]declared{}
	for _, c := range containers {
		for i, port := range c.Ports {
			p := c.path.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				w.addf("%s: hostIP set without hostPort: %+v", p, port)
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range byPort[k] {
				o := other.port
				switch {
				case port.HostIP == o.HostIP && port.HostPort == o.HostPort:
					w.addf("%s: duplicate port definition with %s", p, other.path)
				case port.HostPort == 0 || o.HostPort == 0:
					// Redundant rather than dangerous.
					w.addf("%s: overlapping port definition with %s", p, other.path)
				case port.HostPort == o.HostPort && (port.HostIP == "") != (o.HostIP == ""):
					// One on every address, one on a single address: which
					// wins is undefined.
					w.addf("%s: dangerously ambiguous port definition with %s", p, other.path)
				}
			}
			byPort[k] = append(byPort[k], declared{p, port})
		}
	}
	return w
}

// containerAt is a container with its path, for init, regular and
// ephemeral containers alike.
type containerAt struct {
	*corev1.Container
	path *field.Path
}

// podContainers lists a pod's containers in kube's order: init
// containers, containers, then ephemeral containers.
func podContainers(spec *corev1.PodSpec, specPath *field.Path) []containerAt {
	var all []containerAt
	for i := range spec.InitContainers {
		all = append(all, containerAt{&spec.InitContainers[i], specPath.Child("initContainers").Index(i)})
	}
	for i := range spec.Containers {
		all = append(all, containerAt{&spec.Containers[i], specPath.Child("containers").Index(i)})
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		all = append(all, containerAt{&c, specPath.Child("ephemeralContainers").Index(i)})
	}
	return all
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
