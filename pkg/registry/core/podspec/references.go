package podspec

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMapNames are the names of the config maps a pod spec references,
// as kube's VisitPodConfigmapNames finds them: every container's (init,
// regular, ephemeral) envFrom and env, then the volumes (configMap and
// projected config maps). Empty names are left out; a name may appear
// more than once.
func ConfigMapNames(spec *corev1.PodSpec) []string {
	var names nameList
	visitContainerEnvs(spec, func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.ConfigMapRef != nil {
				names.add(e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				names.add(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	})
	for i := range spec.Volumes {
		s := &spec.Volumes[i].VolumeSource
		switch {
		case s.Projected != nil:
			for _, p := range s.Projected.Sources {
				if p.ConfigMap != nil {
					names.add(p.ConfigMap.Name)
				}
			}
		case s.ConfigMap != nil:
			names.add(s.ConfigMap.Name)
		}
	}
	return names
}

// APIObjectReference names the first kind of API object a pod references
// (its service account, secrets, config maps, resource claims, or the
// objects behind its volumes), in kube's words, or "" when it references
// none, as kube's HasAPIObjectReference: a node may only create mirror
// pods that reference nothing, so that a pod it makes grants it nothing.
// A volume or projection of a kind kube does not know is an error.
func APIObjectReference(spec *corev1.PodSpec) (string, error) {
	switch {
	case spec.ServiceAccountName != "":
		return "serviceaccounts", nil
	case len(SecretNames(spec)) > 0:
		return "secrets", nil
	case len(ConfigMapNames(spec)) > 0:
		return "configmaps", nil
	case len(spec.ResourceClaims) > 0:
		return "resourceclaims", nil
	}
	for i := range spec.Volumes {
		if ref, err := volumeAPIObjectReference(&spec.Volumes[i]); ref != "" || err != nil {
			return ref, err
		}
	}
	return "", nil
}

func volumeAPIObjectReference(v *corev1.Volume) (string, error) {
	switch {
	case v.AWSElasticBlockStore != nil, v.AzureDisk != nil, v.CephFS != nil, v.Cinder != nil,
		v.DownwardAPI != nil, v.EmptyDir != nil, v.FC != nil, v.FlexVolume != nil, v.Flocker != nil, v.GCEPersistentDisk != nil,
		v.GitRepo != nil, v.HostPath != nil, v.Image != nil, v.ISCSI != nil, v.NFS != nil, v.PhotonPersistentDisk != nil,
		v.PortworxVolume != nil, v.Quobyte != nil, v.RBD != nil, v.ScaleIO != nil, v.StorageOS != nil, v.VsphereVolume != nil:
		return "", nil
	case v.ConfigMap != nil:
		return "configmaps (via configmap volumes)", nil
	case v.Secret != nil:
		return "secrets (via secret volumes)", nil
	case v.CSI != nil:
		return "csidrivers (via CSI volumes)", nil
	case v.Glusterfs != nil:
		return "endpoints (via glusterFS volumes)", nil
	case v.PersistentVolumeClaim != nil:
		return "persistentvolumeclaims", nil
	case v.Ephemeral != nil:
		return "persistentvolumeclaims (via ephemeral volumes)", nil
	case v.AzureFile != nil:
		return "secrets (via azureFile volumes)", nil
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			switch {
			case s.ConfigMap != nil:
				return "configmaps (via projected volumes)", nil
			case s.Secret != nil:
				return "secrets (via projected volumes)", nil
			case s.ServiceAccountToken != nil:
				return "serviceaccounts (via projected volumes)", nil
			case s.ClusterTrustBundle != nil:
				return "clustertrustbundles", nil
			case s.PodCertificate != nil:
				return "podcertificates", nil
			case s.DownwardAPI != nil:
				// needs nothing from the API
			default:
				return "", fmt.Errorf("unknown source for projected volume %q", v.Name)
			}
		}
		return "", nil
	}
	return "", fmt.Errorf("unknown volume type for volume  %q", v.Name)
}
