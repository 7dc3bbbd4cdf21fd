package podspec

import (
	"regexp"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The defaults below are kube's v1 defaulters (pkg/apis/core/v1/defaults.go
// and the generated SetObjectDefaults_*), which kube applies to every
// object it decodes from a request. Pods get SetDefaultsPod; pod templates,
// replication controllers and the apps/v1 workloads get SetDefaultsPodSpec
// on their template, as kube does.

// SetDefaultsPod applies kube's defaults to a pod: those of its spec, and
// the ones kube keeps for pods alone (not templates).
func SetDefaultsPod(pod *corev1.Pod) {
	spec := &pod.Spec
	// A negative grace period counts as 1 second, on pods only.
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	}
	// Requests default to limits, on pods only.
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			defaultRequestsFromLimits(&containers[i].Resources)
		}
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr.To(corev1.DefaultEnableServiceLinks)
	}
	if spec.HostNetwork {
		defaultHostNetworkPorts(spec.InitContainers)
		defaultHostNetworkPorts(spec.Containers)
	}
	SetDefaultsPodSpec(spec)
	defaultPodStatusIPs(&pod.Status)
	for _, statuses := range [][]corev1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses, pod.Status.EphemeralContainerStatuses} {
		for i := range statuses {
			roundUpResourceList(statuses[i].AllocatedResources)
			if r := statuses[i].Resources; r != nil {
				roundUpResourceList(r.Limits)
				roundUpResourceList(r.Requests)
			}
		}
	}
	roundUpResourceList(pod.Status.AllocatedResources)
	if r := pod.Status.Resources; r != nil {
		roundUpResourceList(r.Limits)
		roundUpResourceList(r.Requests)
	}
}

// SetDefaultsPodSpec applies kube's defaults to a pod spec and everything
// in it (containers, volumes, probes). It is what a pod template gets.
func SetDefaultsPodSpec(spec *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName; the
	// newer field wins.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount //nolint:staticcheck // kept in sync, as kube does
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr.To[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		setDefaultsVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		setDefaultsContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		setDefaultsContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		setDefaultsContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundUpResourceList(spec.Overhead)
	if r := spec.Resources; r != nil {
		roundUpResourceList(r.Limits)
		roundUpResourceList(r.Requests)
	}
}

func setDefaultsContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		if from := c.Env[i].ValueFrom; from != nil {
			if from.FieldRef != nil && from.FieldRef.APIVersion == "" {
				from.FieldRef.APIVersion = "v1"
			}
			if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
				from.FileKeyRef.Optional = ptr.To(false)
			}
		}
	}
	roundUpResourceList(c.Resources.Limits)
	roundUpResourceList(c.Resources.Requests)
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setDefaultsProbe(p)
	}
	if lc := c.Lifecycle; lc != nil {
		for _, h := range []*corev1.LifecycleHandler{lc.PostStart, lc.PreStop} {
			if h != nil {
				setDefaultsHTTPGet(h.HTTPGet)
			}
		}
	}
}

func setDefaultsProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	setDefaultsHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr.To("")
	}
}

func setDefaultsHTTPGet(a *corev1.HTTPGetAction) {
	if a == nil {
		return
	}
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

func setDefaultsVolume(v *corev1.Volume) {
	if ptr.AllPtrFieldsNil(&v.VolumeSource) {
		v.VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	src := &v.VolumeSource
	if src.Image != nil && src.Image.PullPolicy == "" {
		src.Image.PullPolicy = defaultPullPolicy(src.Image.Reference)
	}
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = ptr.To(corev1.HostPathUnset)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if d := src.DownwardAPI; d != nil {
		if d.DefaultMode == nil {
			d.DefaultMode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIFiles(d.Items)
	}
	if p := src.Projected; p != nil {
		if p.DefaultMode == nil {
			p.DefaultMode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
		}
		for i := range p.Sources {
			if d := p.Sources[i].DownwardAPI; d != nil {
				defaultDownwardAPIFiles(d.Items)
			}
			if t := p.Sources[i].ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr.To[int64](3600)
			}
		}
	}
	if s := src.ISCSI; s != nil && s.ISCSIInterface == "" {
		s.ISCSIInterface = "default"
	}
	if s := src.RBD; s != nil {
		if s.RBDPool == "" {
			s.RBDPool = "rbd"
		}
		if s.RadosUser == "" {
			s.RadosUser = "admin"
		}
		if s.Keyring == "" {
			s.Keyring = "/etc/ceph/keyring"
		}
	}
	if s := src.AzureDisk; s != nil {
		if s.CachingMode == nil {
			s.CachingMode = ptr.To(corev1.AzureDataDiskCachingReadWrite)
		}
		if s.FSType == nil {
			s.FSType = ptr.To("ext4")
		}
		if s.ReadOnly == nil {
			s.ReadOnly = ptr.To(false)
		}
		if s.Kind == nil {
			s.Kind = ptr.To(corev1.AzureSharedBlobDisk)
		}
	}
	if s := src.ScaleIO; s != nil {
		if s.StorageMode == "" {
			s.StorageMode = "ThinProvisioned"
		}
		if s.FSType == "" {
			s.FSType = "xfs"
		}
	}
	if e := src.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
		SetDefaultsPersistentVolumeClaimSpec(&e.VolumeClaimTemplate.Spec)
	}
}

// SetDefaultsPersistentVolumeClaimSpec applies kube's defaults to a claim
// spec (inline in ephemeral volumes and statefulset templates).
func SetDefaultsPersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	roundUpResourceList(spec.Resources.Limits)
	roundUpResourceList(spec.Resources.Requests)
}

func defaultDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

// roundUpResourceList rounds quantities up to milli precision, as kube
// does for API compatibility (0.0001 CPU becomes 1m).
func roundUpResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}

func defaultRequestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultHostNetworkPorts makes every container port a host port on the
// host network.
func defaultHostNetworkPorts(containers []corev1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			if p := &containers[i].Ports[j]; p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// defaultPodStatusIPs keeps status.podIP and status.podIPs in sync; podIP
// wins when they disagree (older kubelets write only podIP).
func defaultPodStatusIPs(s *corev1.PodStatus) {
	hasIP, hasIPs := s.PodIP != "", len(s.PodIPs) > 0
	switch {
	case hasIP && !hasIPs:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	case !hasIP && hasIPs:
		s.PodIP = s.PodIPs[0].IP
	case hasIP && hasIPs && s.PodIPs[0].IP != s.PodIP:
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	}
}

// defaultPullPolicy is Always for an image tagged "latest" (or not tagged
// at all), else IfNotPresent. An image kube cannot parse gets
// IfNotPresent, as in kube.
func defaultPullPolicy(image string) corev1.PullPolicy {
	if tag, ok := imageTag(image); ok && tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// The image reference grammar of github.com/distribution/reference, which
// kube uses to find an image's tag. Compiled on first use, not when the
// program starts: every run of the binary (`--help`, the etcd mode)
// would pay for it.
var (
	imageReferenceRegexp = sync.OnceValue(func() *regexp.Regexp {
		const (
			alphanumeric    = `[a-z0-9]+`
			separator       = `(?:[._]|__|[-]+)`
			domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
			host            = `(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[(?:[a-fA-F0-9:]+)\])`
			domainAndPort   = host + `(?::[0-9]+)?`
			pathComponent   = alphanumeric + `(?:` + separator + alphanumeric + `)*`
			name            = `(?:` + domainAndPort + `/)?` + pathComponent + `(?:/` + pathComponent + `)*`
			tag             = `[\w][\w.-]{0,127}`
			digest          = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
		)
		return regexp.MustCompile(`^(` + name + `)(?::(` + tag + `))?(?:@(` + digest + `))?$`)
	})
	imageIdentifierRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })
)

// imageTag returns the tag of an image reference: "latest" when it has
// neither tag nor digest, "" when it has only a digest. ok is false when
// the reference does not parse.
func imageTag(image string) (tag string, ok bool) {
	if imageIdentifierRegexp().MatchString(image) {
		return "", false
	}
	m := imageReferenceRegexp().FindStringSubmatch(image)
	if m == nil || len(m[1]) > 255 {
		return "", false
	}
	if m[2] == "" && m[3] == "" {
		return "latest", true
	}
	return m[2], true
}
