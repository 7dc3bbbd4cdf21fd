package podspec

import (
	"fmt"
	"strings"

	corevalidation "github.com/miniapiserver/miniapiserver/pkg/registry/core/validation"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	// Fields a container's environment may read from its pod.
	validEnvFieldPaths = []string{
		"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
		"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs",
	}
	// Resources a container's environment or a downward API volume may
	// read (plus hugepages).
	validContainerResourceFieldPaths = []string{
		"limits.cpu", "limits.ephemeral-storage", "limits.memory",
		"requests.cpu", "requests.ephemeral-storage", "requests.memory",
	}
)

// validateContainers validates the regular containers of a pod spec.
func validateContainers(containers []corev1.Container, volumes map[string]corev1.VolumeSource, hostUsers bool, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		c := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, hostUsers, p)...)
		if names.Has(c.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
		allErrs = append(allErrs, validateLifecycleAndProbes(c, gracePeriod, p)...)
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateEnum(*c.RestartPolicy, p.Child("restartPolicy"), corev1.ContainerRestartPolicyAlways,
				corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure)...)
		}
	}
	return append(allErrs, checkHostPortConflicts(containers, fldPath)...)
}

// validateInitContainers validates init containers: names unique among
// all containers, and probes and lifecycle only on sidecars (init
// containers with restartPolicy Always).
func validateInitContainers(containers, regular []corev1.Container, volumes map[string]corev1.VolumeSource, hostUsers bool, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for _, c := range regular {
		names.Insert(c.Name)
	}
	for i := range containers {
		c := &containers[i]
		p := fldPath.Index(i)
		allErrs = append(allErrs, validateContainerCommon(c, volumes, hostUsers, p)...)
		sidecar := false
		if c.RestartPolicy != nil {
			allErrs = append(allErrs, validateEnum(*c.RestartPolicy, p.Child("restartPolicy"), corev1.ContainerRestartPolicyAlways,
				corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure)...)
			sidecar = *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
		if names.Has(c.Name) {
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		allErrs = append(allErrs, checkHostPortConflicts([]corev1.Container{*c}, fldPath)...)
		if sidecar {
			allErrs = append(allErrs, validateLifecycleAndProbes(c, gracePeriod, p)...)
			continue
		}
		const notSidecar = "may not be set for init containers without restartPolicy=Always"
		if c.Lifecycle != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("lifecycle"), notSidecar))
		}
		if c.LivenessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("livenessProbe"), notSidecar))
		}
		if c.ReadinessProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("readinessProbe"), notSidecar))
		}
		if c.StartupProbe != nil {
			allErrs = append(allErrs, field.Forbidden(p.Child("startupProbe"), notSidecar))
		}
	}
	return allErrs
}

// validateContainerCommon is what every kind of container must satisfy.
func validateContainerCommon(c *corev1.Container, volumes map[string]corev1.VolumeSource, hostUsers bool, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if c.Name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), ""))
	} else {
		allErrs = append(allErrs, corevalidation.ValidateDNS1123Label(c.Name, p.Child("name"))...)
	}
	if c.Image == "" {
		allErrs = append(allErrs, field.Required(p.Child("image"), ""))
	}
	allErrs = append(allErrs, validateEnum(c.TerminationMessagePolicy, p.Child("terminationMessagePolicy"),
		corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError)...)
	allErrs = append(allErrs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	allErrs = append(allErrs, validateEnv(c.Env, p.Child("env"))...)
	allErrs = append(allErrs, validateEnvFrom(c.EnvFrom, p.Child("envFrom"))...)
	allErrs = append(allErrs, validateVolumeMounts(c.VolumeMounts, volumes, p.Child("volumeMounts"))...)
	allErrs = append(allErrs, validateEnum(c.ImagePullPolicy, p.Child("imagePullPolicy"), corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)...)
	allErrs = append(allErrs, corevalidation.ValidateContainerResources(&c.Resources, p.Child("resources"))...)
	return append(allErrs, validateContainerSecurityContext(c.SecurityContext, hostUsers, p.Child("securityContext"))...)
}

func validateContainerPorts(ports []corev1.ContainerPort, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		p := fldPath.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					allErrs = append(allErrs, field.Invalid(p.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				allErrs = append(allErrs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			allErrs = append(allErrs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				allErrs = append(allErrs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
		}
		allErrs = append(allErrs, validateEnum(port.Protocol, p.Child("protocol"), corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP)...)
	}
	return allErrs
}

// checkHostPortConflicts finds host ports used twice (same protocol and
// host IP) among containers.
func checkHostPortConflicts(containers []corev1.Container, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for ci, c := range containers {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			key := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(key) {
				allErrs = append(allErrs, field.Duplicate(fldPath.Index(ci).Child("ports").Index(pi).Child("hostPort"), key))
			}
			seen.Insert(key)
		}
	}
	return allErrs
}

func validateEnv(vars []corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range vars {
		p := fldPath.Index(i)
		if ev.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), ev.Name, msg))
			}
		}
		allErrs = append(allErrs, validateEnvVarValueFrom(ev, p.Child("valueFrom"))...)
	}
	return allErrs
}

func validateEnvVarValueFrom(ev corev1.EnvVar, fldPath *field.Path) field.ErrorList {
	from := ev.ValueFrom
	if from == nil {
		return nil
	}
	var allErrs field.ErrorList
	sources := 0
	if from.FieldRef != nil {
		sources++
		allErrs = append(allErrs, validateObjectFieldSelector(from.FieldRef, validEnvFieldPaths, fldPath.Child("fieldRef"))...)
	}
	if from.ResourceFieldRef != nil {
		sources++
		allErrs = append(allErrs, validateResourceFieldSelector(from.ResourceFieldRef, false, fldPath.Child("resourceFieldRef"))...)
	}
	if r := from.ConfigMapKeyRef; r != nil {
		sources++
		allErrs = append(allErrs, validateKeySelector(r.Name, r.Key, fldPath.Child("configMapKeyRef"))...)
	}
	if r := from.SecretKeyRef; r != nil {
		sources++
		allErrs = append(allErrs, validateKeySelector(r.Name, r.Key, fldPath.Child("secretKeyRef"))...)
	}
	if r := from.FileKeyRef; r != nil {
		sources++
		if r.VolumeName == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("fileKeyRef", "volumeName"), ""))
		}
		if r.Path == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("fileKeyRef", "path"), ""))
		}
		if r.Key == "" {
			allErrs = append(allErrs, field.Required(fldPath.Child("fileKeyRef", "key"), ""))
		}
	}
	switch {
	case sources == 0:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not be specified when `value` is not empty"))
	case sources > 1:
		allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
	}
	return allErrs
}

// validateObjectFieldSelector validates a downward API field reference:
// one of the supported paths, or a subscripted label or annotation.
func validateObjectFieldSelector(fs *corev1.ObjectFieldSelector, supported []string, fldPath *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(fldPath.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(fldPath.Child("fieldPath"), "")}
	}
	if fs.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(fldPath.Child("fieldPath"), fs.FieldPath,
			fmt.Sprintf("error converting fieldPath: unsupported pod version: %s", fs.APIVersion))}
	}
	if path, subscript, ok := splitSubscriptedPath(fs.FieldPath); ok {
		switch path {
		case "metadata.annotations":
			return corevalidation.ValidateQualifiedName(strings.ToLower(subscript), fldPath)
		case "metadata.labels":
			return corevalidation.ValidateQualifiedName(subscript, fldPath)
		}
		return field.ErrorList{field.Invalid(fldPath, path, "does not support subscript")}
	}
	for _, s := range supported {
		if fs.FieldPath == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath.Child("fieldPath"), fs.FieldPath, supported)}
}

// splitSubscriptedPath splits "metadata.labels['key']" into the path and
// the key.
func splitSubscriptedPath(p string) (path, subscript string, ok bool) {
	if !strings.HasSuffix(p, "']") {
		return p, "", false
	}
	path, subscript, ok = strings.Cut(strings.TrimSuffix(p, "']"), "['")
	return path, subscript, ok
}

func validateResourceFieldSelector(fs *corev1.ResourceFieldSelector, volume bool, fldPath *field.Path) field.ErrorList {
	switch {
	case volume && fs.ContainerName == "":
		return field.ErrorList{field.Required(fldPath.Child("containerName"), "")}
	case fs.Resource == "":
		return field.ErrorList{field.Required(fldPath.Child("resource"), "")}
	case strings.HasPrefix(fs.Resource, "requests.hugepages-"), strings.HasPrefix(fs.Resource, "limits.hugepages-"):
		return nil
	}
	for _, s := range validContainerResourceFieldPaths {
		if fs.Resource == s {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fldPath.Child("resource"), fs.Resource, validContainerResourceFieldPaths)}
}

// validateKeySelector validates a reference to a key of a config map or
// secret.
func validateKeySelector(name, key string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(name, false) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("name"), name, msg))
	}
	if key == "" {
		return append(allErrs, field.Required(fldPath.Child("key"), ""))
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("key"), key, msg))
	}
	return allErrs
}

func validateEnvFrom(sources []corev1.EnvFromSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ev := range sources {
		p := fldPath.Index(i)
		if ev.Prefix != "" {
			for _, msg := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				allErrs = append(allErrs, field.Invalid(p.Child("prefix"), ev.Prefix, msg))
			}
		}
		n := 0
		for _, ref := range []struct {
			set  bool
			name string
			path string
		}{
			{ev.ConfigMapRef != nil, refName(ev.ConfigMapRef), "configMapRef"},
			{ev.SecretRef != nil, secretRefName(ev.SecretRef), "secretRef"},
		} {
			if !ref.set {
				continue
			}
			n++
			if ref.name == "" {
				allErrs = append(allErrs, field.Required(p.Child(ref.path, "name"), ""))
				continue
			}
			for _, msg := range apivalidation.NameIsDNSSubdomain(ref.name, true) {
				allErrs = append(allErrs, field.Invalid(p.Child(ref.path, "name"), ref.name, msg))
			}
		}
		switch {
		case n == 0:
			allErrs = append(allErrs, field.Invalid(fldPath, "", "must specify one of: `configMapRef` or `secretRef`"))
		case n > 1:
			allErrs = append(allErrs, field.Invalid(fldPath, "", "may not have more than one field specified at a time"))
		}
	}
	return allErrs
}

func refName(r *corev1.ConfigMapEnvSource) string {
	if r == nil {
		return ""
	}
	return r.Name
}

func secretRefName(r *corev1.SecretEnvSource) string {
	if r == nil {
		return ""
	}
	return r.Name
}

func validateVolumeMounts(mounts []corev1.VolumeMount, volumes map[string]corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	paths := sets.New[string]()
	for i, m := range mounts {
		p := fldPath.Index(i)
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), ""))
		}
		if _, ok := volumes[m.Name]; !ok {
			allErrs = append(allErrs, field.NotFound(p.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			allErrs = append(allErrs, field.Required(p.Child("mountPath"), ""))
		}
		if paths.Has(m.MountPath) {
			allErrs = append(allErrs, field.Invalid(p.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths.Insert(m.MountPath)
		// kube reports these two against the list, not the item.
		if m.SubPath != "" {
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPath, fldPath.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			allErrs = append(allErrs, validateLocalDescendingPath(m.SubPathExpr, fldPath.Child("subPathExpr"))...)
		}
		if mp := m.MountPropagation; mp != nil {
			allErrs = append(allErrs, validateEnum(*mp, fldPath.Child("mountPropagation"),
				corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone)...)
		}
	}
	return allErrs
}

// handler is the union of a probe's and a lifecycle hook's actions.
type handler struct {
	exec    *corev1.ExecAction
	httpGet *corev1.HTTPGetAction
	tcp     *corev1.TCPSocketAction
	grpc    *corev1.GRPCAction
	sleep   *corev1.SleepAction
}

func lifecycleHandler(h *corev1.LifecycleHandler) handler {
	return handler{exec: h.Exec, httpGet: h.HTTPGet, tcp: h.TCPSocket, sleep: h.Sleep}
}

func probeHandler(h *corev1.ProbeHandler) handler {
	return handler{exec: h.Exec, httpGet: h.HTTPGet, tcp: h.TCPSocket, grpc: h.GRPC}
}

// validateLifecycleAndProbes validates what regular containers and
// sidecars may have: lifecycle hooks and probes.
func validateLifecycleAndProbes(c *corev1.Container, gracePeriod *int64, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if lc := c.Lifecycle; lc != nil {
		if lc.PostStart != nil {
			allErrs = append(allErrs, validateHandler(lifecycleHandler(lc.PostStart), gracePeriod, p.Child("lifecycle", "postStart"))...)
		}
		if lc.PreStop != nil {
			allErrs = append(allErrs, validateHandler(lifecycleHandler(lc.PreStop), gracePeriod, p.Child("lifecycle", "preStop"))...)
		}
	}
	for _, probe := range []struct {
		probe *corev1.Probe
		name  string
	}{{c.LivenessProbe, "livenessProbe"}, {c.ReadinessProbe, "readinessProbe"}, {c.StartupProbe, "startupProbe"}} {
		pr := probe.probe
		if pr == nil {
			continue
		}
		pp := p.Child(probe.name)
		allErrs = append(allErrs, validateHandler(probeHandler(&pr.ProbeHandler), gracePeriod, pp)...)
		for _, f := range []struct {
			v    int32
			name string
		}{
			{pr.InitialDelaySeconds, "initialDelaySeconds"}, {pr.TimeoutSeconds, "timeoutSeconds"}, {pr.PeriodSeconds, "periodSeconds"},
			{pr.SuccessThreshold, "successThreshold"}, {pr.FailureThreshold, "failureThreshold"},
		} {
			allErrs = append(allErrs, apivalidation.ValidateNonnegativeField(int64(f.v), pp.Child(f.name))...)
		}
		if g := pr.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
			allErrs = append(allErrs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
		}
		switch probe.name {
		case "readinessProbe":
			if pr.TerminationGracePeriodSeconds != nil {
				allErrs = append(allErrs, field.Invalid(pp.Child("terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
			}
		default:
			if pr.SuccessThreshold != 1 {
				allErrs = append(allErrs, field.Invalid(pp.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
			}
		}
	}
	return allErrs
}

// validateHandler requires exactly one action of a probe or hook.
func validateHandler(h handler, gracePeriod *int64, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	n := 0
	one := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			allErrs = append(allErrs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		allErrs = append(allErrs, validate()...)
	}
	one(h.exec != nil, "exec", func() field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("exec", "command"), "")}
		}
		return nil
	})
	one(h.httpGet != nil, "httpGet", func() field.ErrorList { return validateHTTPGetAction(h.httpGet, fldPath.Child("httpGet")) })
	one(h.tcp != nil, "tcpSocket", func() field.ErrorList {
		return corevalidation.ValidatePortNumOrName(h.tcp.Port, fldPath.Child("tcpSocket", "port"))
	})
	one(h.grpc != nil, "grpc", func() field.ErrorList {
		return corevalidation.ValidatePortNumOrName(intstr.FromInt32(h.grpc.Port), fldPath.Child("grpc", "port"))
	})
	one(h.sleep != nil, "sleep", func() field.ErrorList {
		if gracePeriod != nil && (h.sleep.Seconds < 0 || h.sleep.Seconds > *gracePeriod) {
			return field.ErrorList{field.Invalid(fldPath.Child("sleep"), h.sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *gracePeriod))}
		}
		return nil
	})
	if n == 0 {
		allErrs = append(allErrs, field.Required(fldPath, "must specify a handler type"))
	}
	return allErrs
}

func validateHTTPGetAction(a *corev1.HTTPGetAction, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if a.Path == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("path"), ""))
	}
	allErrs = append(allErrs, corevalidation.ValidatePortNumOrName(a.Port, fldPath.Child("port"))...)
	if a.Scheme != corev1.URISchemeHTTP && a.Scheme != corev1.URISchemeHTTPS {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("scheme"), a.Scheme, []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}))
	}
	for _, h := range a.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(h.Name) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("httpHeaders"), h.Name, msg))
		}
	}
	return allErrs
}
