package podspec

import corev1 "k8s.io/api/core/v1"

// SecretNames are the names of the secrets a pod spec references, as
// kube's VisitPodSecretNames finds them, in its order: image pull
// secrets, then every container's (init, regular, ephemeral) envFrom and
// env, then the volumes (secret, projected secrets, and the secret
// references of the volume plugins that take one). Empty names are left
// out; a name may appear more than once.
func SecretNames(spec *corev1.PodSpec) []string {
	var names nameList
	for _, ref := range spec.ImagePullSecrets {
		names.add(ref.Name)
	}
	visitContainerEnvs(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				names.add(e.SecretRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				names.add(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		for _, name := range volumeSecretNames(&spec.Volumes[i].VolumeSource) {
			names.add(name)
		}
	}
	return names
}

// nameList collects the names of the objects a pod references.
type nameList []string

// add appends name, unless it is empty (an unset reference).
func (l *nameList) add(name string) {
	if name != "" {
		*l = append(*l, name)
	}
}

// visitContainerEnvs calls visit with the envFrom and env of every
// container of spec, in kube's order: init, regular, ephemeral.
func visitContainerEnvs(spec *corev1.PodSpec, visit func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar)) {
	for _, containers := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range containers {
			visit(containers[i].EnvFrom, containers[i].Env)
		}
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i].EphemeralContainerCommon
		visit(c.EnvFrom, c.Env)
	}
}

// volumeSecretNames are the secrets one volume references.
func volumeSecretNames(s *corev1.VolumeSource) []string {
	ref := func(r *corev1.LocalObjectReference) []string {
		if r == nil {
			return nil
		}
		return []string{r.Name}
	}
	switch {
	case s.AzureFile != nil:
		return []string{s.AzureFile.SecretName}
	case s.CephFS != nil:
		return ref(s.CephFS.SecretRef)
	case s.Cinder != nil:
		return ref(s.Cinder.SecretRef)
	case s.FlexVolume != nil:
		return ref(s.FlexVolume.SecretRef)
	case s.Projected != nil:
		var names []string
		for _, p := range s.Projected.Sources {
			if p.Secret != nil {
				names = append(names, p.Secret.Name)
			}
		}
		return names
	case s.RBD != nil:
		return ref(s.RBD.SecretRef)
	case s.Secret != nil:
		return []string{s.Secret.SecretName}
	case s.ScaleIO != nil:
		return ref(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		return ref(s.ISCSI.SecretRef)
	case s.StorageOS != nil:
		return ref(s.StorageOS.SecretRef)
	case s.CSI != nil:
		return ref(s.CSI.NodePublishSecretRef)
	}
	return nil
}
